#!/usr/bin/env python3
"""A deployment's people, end to end, signing in through the company's OpenID Connect
provider (npm oidc-provider, tests/support/oidc_provider.mjs) with a real browser.

Usage: people_flow.py URL WORKSPACE_ID --owner LOGIN=EMAIL --person LOGIN=EMAIL
                      --stranger LOGIN=EMAIL [--label LABEL]
  URL           the server's public URL (its issuer; /mcp and /v1 under it), started
                with KFIN_OIDC_* naming the provider, on a fresh database
  WORKSPACE_ID  the workspace `workspace create --owner-email EMAIL-of-owner` made
  --owner, --person, --stranger  the provider's accounts (the login typed on its login
                page, the verified e-mail of its ID token): the invited owner, the
                person the owner invites, someone nobody invited

In order, each step in a browser with no session unless said otherwise:
  1. the owner signs in from a REST client: registered at /register (RFC 7591, a
     loopback redirect URI), authorization request for resource URL/v1 with scope
     `finance.access finance.access.write` (code, PKCE S256); the browser goes through
     the provider's login and consent and approves the server's consent page (which
     names the client and the owner's e-mail); the code is exchanged; GET /v1/members
     (x-workspace-id) answers the owner alone, as owner;
  2. the owner invites the person as finance (POST /v1/invitations: 201, pending);
  3. the person signs in from the Python `mcp` SDK's OAuthClientProvider (DCR, the
     browser through the provider), lists the tools, calls finance_workspaces_list (the
     workspace, role finance), finance_companies_create (a company, not an error) and
     finance_companies_list (the company in it);
  4. the owner lowers the person to viewer (PATCH /v1/members/{user_id}: 200); the
     person's next finance_companies_create with the same token is an isError result
     with code forbidden, and finance_companies_list still answers;
  5. the person opens URL/oauth/apps: the page starts a sign-in at the provider and
     resumes to the page, which lists the app (its name, its workspace); the person
     revokes it there (the page says so and no longer lists it); the app's token is
     then refused (401) on /mcp, its refresh token at /token (400), and the SDK's next
     request meets the 401 and is sent back to sign in;
  6. the stranger signs in for the REST client: the provider lets them in, the server
     does not — the page at /oauth/callback (Portuguese: the browser asks for pt-BR)
     says no workspace invited their e-mail and to ask an owner of their workspace to
     invite them; nothing came back to the client, and the workspace's members and
     invitations are what they were.

Each check prints `PASS label: name` or `FAIL label: name: why` (tests/clients/people.sh
counts them). Exit status 0 only if every check passed. The browser and the callback
server listen on (and reach) 127.0.0.1 only and stop before this script exits.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import logging
import pathlib
import secrets
import sys
import time
import urllib.parse
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.auth import OAuthToken  # noqa: E402

from catalogue import WORKSPACES_TOOL, Checks, describe  # noqa: E402
from oauth_browser import Browser, CallbackServer, ProviderVisit  # noqa: E402
from oauth_clients import (  # noqa: E402
    MemoryStorage,
    Traffic,
    authorize_checks,
    callback_checks,
    client_metadata,
    list_all,
)

ACCESS_SCOPES = "finance.access finance.access.write"
REST_CLIENT = "Kobana test: back office (REST)"
MCP_CLIENT = "Kobana test: people (Python mcp)"
WORKSPACE_NAME = "Gama Serviços"
COMPANY = "Gama Serviços Ltda"
WRITE_TOOL = "finance_companies_create"
READ_TOOL = "finance_companies_list"
# What the refusal page says to someone nobody invited (src/oauth/oidc.rs, `refusal`).
NOT_INVITED = "Peça a um proprietário do seu espaço de trabalho que convide você."
# A protocol version the server speaks, for the plain requests of step 5.
PROTOCOL = "2026-07-28"


class Account:
    def __init__(self, spec: str) -> None:
        self.login, _, self.email = spec.partition("=")


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def claims_of(jwt: str) -> dict[str, Any]:
    """A JWT's payload, unverified (the server verifies; the test only reads `gid`)."""
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def tool_error_code(result: Any) -> str | None:
    """The `error.code` of a tool's isError result, from its structured content or its
    text (a JSON object)."""
    for source in (result.structured_content, *[getattr(c, "text", None) for c in result.content]):
        if isinstance(source, str):
            try:
                source = json.loads(source)
            except ValueError:
                continue
        if isinstance(source, dict) and isinstance(source.get("error"), dict):
            return source["error"].get("code")
    return None


def text_of(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)[:300]


def provider_checks(checks: Checks, visit: ProviderVisit, who: str) -> None:
    checks.record(
        f"{who}: the browser signed in on the provider's login page and consented there",
        visit.provider_login and visit.provider_consent,
        f"login {visit.provider_login}, consent {visit.provider_consent}",
    )


class RestClient:
    """An app of the REST API (/v1): registered by RFC 7591 with a loopback redirect URI,
    signed in by the authorization code flow with PKCE, its requests with the bearer."""

    def __init__(self, url: str, http: httpx2.AsyncClient, callback: CallbackServer) -> None:
        self.url = url
        self.http = http
        self.callback = callback
        self.client_id = ""
        self.token = ""

    async def register(self) -> httpx2.Response:
        metadata = client_metadata(self.callback.url, REST_CLIENT).model_dump(mode="json", exclude_none=True)
        answer = await self.http.post(f"{self.url}/register", json=metadata)
        if answer.status_code == 201:
            self.client_id = answer.json().get("client_id", "")
        return answer

    def authorize_url(self, challenge: str, state: str) -> str:
        query = urllib.parse.urlencode(
            {
                "response_type": "code",
                "client_id": self.client_id,
                "redirect_uri": self.callback.url,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "state": state,
                "scope": ACCESS_SCOPES,
                "resource": f"{self.url}/v1",
            }
        )
        return f"{self.url}/authorize?{query}"

    async def exchange(self, code: str, verifier: str) -> httpx2.Response:
        answer = await self.http.post(
            f"{self.url}/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": self.callback.url,
                "code_verifier": verifier,
                "client_id": self.client_id,
                "resource": f"{self.url}/v1",
            },
        )
        if answer.status_code == 200:
            self.token = answer.json().get("access_token", "")
        return answer

    async def send(self, method: str, path: str, workspace: str, body: Any = None) -> httpx2.Response:
        headers = {"authorization": f"Bearer {self.token}", "x-workspace-id": workspace}
        return await self.http.request(method, f"{self.url}{path}", headers=headers, json=body)

    async def people(self, workspace: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The workspace's members and invitations."""
        members = await self.send("GET", "/v1/members", workspace)
        invitations = await self.send("GET", "/v1/invitations", workspace)
        return members.json().get("data", []), invitations.json().get("data", [])


def body(answer: httpx2.Response) -> str:
    return f"{answer.status_code} {answer.text[:300]}"


async def owner_signs_in(
    checks: Checks, browser: Browser, rest: RestClient, owner: Account, workspace: str
) -> bool:
    """Step 1."""
    registered = await rest.register()
    if not checks.record(
        "the REST client registered at /register", registered.status_code == 201 and bool(rest.client_id),
        body(registered),
    ):  # fmt: skip
        return False
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(16)
    visit = await asyncio.to_thread(browser.sign_in_at_provider, rest.authorize_url(challenge, state), owner.login,
                                    rest.callback.url)  # fmt: skip
    provider_checks(checks, visit, "owner")
    checks.record(
        f"owner: the server's consent page names {REST_CLIENT!r} and {owner.email}",
        visit.consent_shown and REST_CLIENT in visit.consent_text and owner.email in visit.consent_text,
        f"consent text {visit.consent_text[:300]!r}",
    )
    got = await asyncio.to_thread(rest.callback.wait)
    callback_checks(checks, got, rest.url, state)
    exchanged = await rest.exchange(got.one("code") or "", verifier)
    scope = exchanged.json().get("scope", "") if exchanged.status_code == 200 else ""
    if not checks.record(
        f"owner: the code exchanged for a /v1 token with scope {ACCESS_SCOPES}",
        bool(rest.token) and set(ACCESS_SCOPES.split()) <= set(scope.split()),
        body(exchanged),
    ):
        return False
    members, _ = await rest.people(workspace)
    checks.record(
        "owner: GET /v1/members answers the owner alone, as owner",
        [(m.get("email"), m.get("role")) for m in members] == [(owner.email, "owner")],
        f"members {members}",
    )
    return True


def company(workspace: str, name: str) -> dict[str, Any]:
    return {"name": name, "cnpj": "12.345.678/0001-95", "workspace_id": workspace}


async def companies_listed(checks: Checks, client: Client, workspace: str, who: str) -> None:
    listed = await client.call_tool(READ_TOOL, {"workspace_id": workspace})
    checks.record(
        f"{who}: {READ_TOOL} answers the company created",
        not listed.is_error and COMPANY in text_of(listed),
        f"isError={listed.is_error}: {text_of(listed)}",
    )


async def works_as_finance(checks: Checks, client: Client, workspace: str) -> None:
    """Step 3, once signed in."""
    tools = {t.name for t in await list_all(client)}
    checks.record(
        f"person: tools/list offers {WORKSPACES_TOOL}, {READ_TOOL} and {WRITE_TOOL}",
        {WORKSPACES_TOOL, READ_TOOL, WRITE_TOOL} <= tools,
        f"{len(tools)} tools",
    )
    listed = await client.call_tool(WORKSPACES_TOOL, {})
    rows = (listed.structured_content or {}).get("data") or []
    checks.record(
        f"person: {WORKSPACES_TOOL} answers {WORKSPACE_NAME} with the role finance",
        not listed.is_error and [(r.get("id"), r.get("role")) for r in rows] == [(workspace, "finance")],
        f"isError={listed.is_error}: {text_of(listed)}",
    )
    created = await client.call_tool(WRITE_TOOL, company(workspace, COMPANY))
    checks.record(f"person as finance: {WRITE_TOOL} creates the company", not created.is_error,
                  f"isError: {text_of(created)}")  # fmt: skip
    await companies_listed(checks, client, workspace, "person as finance")


async def lowered_to_viewer(checks: Checks, client: Client, rest: RestClient, person: Account, workspace: str) -> None:
    """Step 4."""
    members, _ = await rest.people(workspace)
    user_id = next((m.get("user_id") for m in members if m.get("email") == person.email), None)
    checks.record(
        "owner: GET /v1/members lists the person, as finance",
        any(m.get("email") == person.email and m.get("role") == "finance" for m in members),
        f"members {members}",
    )
    lowered = await rest.send("PATCH", f"/v1/members/{user_id}", workspace, {"role": "viewer"})
    checks.record(
        "owner: PATCH /v1/members/{user_id} lowers the person to viewer",
        lowered.status_code == 200 and lowered.json().get("role") == "viewer",
        body(lowered),
    )
    refused = await client.call_tool(WRITE_TOOL, company(workspace, "Outra Ltda"))
    checks.record(
        f"person as viewer, same token: {WRITE_TOOL} is an isError result with code forbidden",
        refused.is_error and tool_error_code(refused) == "forbidden",
        f"isError={refused.is_error} code={tool_error_code(refused)}: {text_of(refused)}",
    )
    await companies_listed(checks, client, workspace, "person as viewer, same token")


async def revokes_on_the_page(
    checks: Checks, browser: Browser, url: str, http: httpx2.AsyncClient, person: Account, tokens: OAuthToken,
    client_id: str,
) -> None:  # fmt: skip
    """Step 5 up to the SDK's own next request: the page, the revocation, the token and
    the refresh token refused."""
    mcp_url = f"{url}/mcp"
    grant = str(claims_of(tokens.access_token).get("gid", ""))
    before = await plain_call(http, mcp_url, tokens.access_token)
    checks.record("the app's token answers a plain tools/call before", before.status_code == 200, body(before))
    apps_url = f"{url}/oauth/apps"
    visit = await asyncio.to_thread(browser.sign_in_at_provider, apps_url, person.login, apps_url)
    provider_checks(checks, visit, "person, for /oauth/apps")
    checks.record(
        f"/oauth/apps lists {MCP_CLIENT!r} acting in {WORKSPACE_NAME}",
        MCP_CLIENT in visit.text and WORKSPACE_NAME in visit.text and person.email in visit.text,
        f"page {visit.text[:400]!r}",
    )
    landed = await asyncio.to_thread(revoke_on_page, browser, grant, apps_url)
    checks.record(
        "/oauth/apps: revoked there, the page says so and no longer lists the app",
        landed.startswith(f"{apps_url}?revoked=1") and not browser_has_grant(browser, grant),
        f"at {landed}",
    )
    after = await plain_call(http, mcp_url, tokens.access_token)
    checks.record("the app's token is refused after (401)", after.status_code == 401, body(after))
    form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token or "", "client_id": client_id}
    refreshed = await http.post(f"{url}/token", data=form)
    checks.record("the app's refresh token is refused after (400)", refreshed.status_code == 400, body(refreshed))


async def person_works(
    checks: Checks, browser: Browser, url: str, rest: RestClient, person: Account, workspace: str
) -> None:
    """Steps 3, 4 and 5, from the Python mcp SDK's OAuthClientProvider."""
    mcp_url = f"{url}/mcp"
    storage = MemoryStorage()
    revoked = False
    sent_back: list[str] = []
    statuses: list[tuple[str, int]] = []

    with CallbackServer() as callback:
        sent_state: list[str | None] = []

        async def redirect_handler(authorize_url: str) -> None:
            if revoked:
                sent_back.append(authorize_url)
                raise RuntimeError("the client was sent back to sign in")
            authorize_checks(checks, authorize_url, mcp_url)
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(authorize_url).query)
            sent_state.append((query.get("state") or [None])[0])
            visit = await asyncio.to_thread(browser.sign_in_at_provider, authorize_url, person.login, callback.url)
            provider_checks(checks, visit, "person")
            checks.record(
                f"person: the server's consent page names {MCP_CLIENT!r}, {person.email} and {WORKSPACE_NAME}",
                visit.consent_shown
                and all(part in visit.consent_text for part in (MCP_CLIENT, person.email, WORKSPACE_NAME)),
                f"consent text {visit.consent_text[:300]!r}",
            )

        async def callback_handler() -> AuthorizationCodeResult:
            got = await asyncio.to_thread(callback.wait)
            callback_checks(checks, got, url, sent_state[-1] if sent_state else None)
            return AuthorizationCodeResult(code=got.one("code") or "", state=got.one("state"), iss=got.one("iss"))

        async def seen(response: httpx2.Response) -> None:
            statuses.append((response.request.url.path, response.status_code))

        metadata = client_metadata(callback.url, MCP_CLIENT)
        provider = OAuthClientProvider(mcp_url, metadata, storage, redirect_handler, callback_handler)
        traffic = Traffic()
        # After the revocation the SDK's request fails in its own tasks, which ends the
        # session with that error.
        ended = ""
        try:
            async with httpx2.AsyncClient(
                auth=provider, timeout=httpx2.Timeout(30.0),
                event_hooks={"request": [traffic.hook], "response": [seen]},
            ) as http:  # fmt: skip
                transport = streamable_http_client(mcp_url, http_client=http, terminate_on_close=False)
                async with Client(transport, mode="auto", read_timeout_seconds=30) as client:
                    await works_as_finance(checks, client, workspace)
                    first = storage.tokens
                    await lowered_to_viewer(checks, client, rest, person, workspace)
                    tokens = storage.tokens
                    checks.record(
                        "the same token throughout: no new sign-in, no refresh",
                        tokens is not None and first is not None and tokens.access_token == first.access_token
                        and len(traffic.posts("/token")) == 1,
                        f"{len(traffic.posts('/token'))} requests to /token",
                    )  # fmt: skip
                    if tokens is None:
                        return
                    client_id = storage.client_info.client_id if storage.client_info else ""
                    await revokes_on_the_page(checks, browser, url, rest.http, person, tokens, client_id)
                    revoked = True
                    statuses.clear()
                    # The SDK logs the sign-in it could not start with a traceback: expected.
                    logging.getLogger("mcp.client.auth.oauth2").setLevel(logging.CRITICAL)
                    try:
                        answered = await client.call_tool(READ_TOOL, {"workspace_id": workspace})
                        ended = f"answered, isError={answered.is_error}: {text_of(answered)}"
                    except Exception as e:
                        ended = describe(e)
        except Exception as e:
            if not revoked:
                raise
            ended = ended or describe(e)
        if revoked:
            checks.record(
                "the app's next request meets 401 and the SDK is sent back to sign in",
                ("/mcp", 401) in statuses and bool(sent_back),
                f"statuses {statuses}, {ended}",
            )


async def plain_call(http: httpx2.AsyncClient, mcp_url: str, token: str) -> httpx2.Response:
    """tools/call finance_workspaces_list as one plain HTTP request with `token` (outside
    the SDK, so nothing refreshes or signs in again)."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": WORKSPACES_TOOL,
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "authorization": f"Bearer {token}",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL,
        "mcp-method": "tools/call",
        "mcp-name": WORKSPACES_TOOL,
    }
    return await http.post(mcp_url, json=message, headers=headers)


def browser_has_grant(browser: Browser, grant: str) -> bool:
    from selenium.webdriver.common.by import By

    return bool(browser.driver.find_elements(By.CSS_SELECTOR, f"input[name=grant][value='{grant}']"))


def revoke_on_page(browser: Browser, grant: str, apps_url: str) -> str:
    """Clicks the revoke button of `grant` on the connected apps page; answers where the
    browser then is."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = browser.driver
    form = driver.find_element(By.XPATH, f"//form[.//input[@name='grant' and @value='{grant}']]")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(driver, 20).until(lambda d: d.current_url.startswith(f"{apps_url}?revoked"))
    return driver.current_url


async def stranger_is_refused(
    checks: Checks, browser: Browser, rest: RestClient, stranger: Account, workspace: str
) -> None:
    """Step 6."""
    before = await rest.people(workspace)
    _, challenge = pkce()
    visit = await asyncio.to_thread(browser.sign_in_at_provider, rest.authorize_url(challenge, "stranger"),
                                    stranger.login, f"{rest.url}/oauth/callback")  # fmt: skip
    provider_checks(checks, visit, "stranger")
    checks.record(
        f"stranger: the server's page says no workspace invited {stranger.email}: {NOT_INVITED!r}",
        not visit.consent_shown and NOT_INVITED in visit.text and stranger.email in visit.text,
        f"consent {visit.consent_shown}, page {visit.text[:400]!r}",
    )
    try:
        got = rest.callback.wait(seconds=1)
        came = f"the client got {got.params}"
    except TimeoutError:
        came = ""
    checks.record("stranger: nothing came back to the client", not came, came)
    after = await rest.people(workspace)
    checks.record(
        "stranger: the workspace's members and invitations are what they were",
        before == after and len(after[0]) == 2,
        f"before {before}, after {after}",
    )


async def run(args: argparse.Namespace, checks: Checks) -> None:
    url = args.url.rstrip("/")
    owner, person, stranger = Account(args.owner), Account(args.person), Account(args.stranger)
    with Browser() as browser, CallbackServer() as callback:
        driver = browser.driver
        # The provider's development pages link a web font: nothing leaves 127.0.0.1.
        # The server's pages in Portuguese, as a Brazilian browser asks.
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*fonts.googleapis.com*", "*fonts.gstatic.com*"]})
        driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Accept-Language": "pt-BR,pt;q=0.9"}})
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as http:
            rest = RestClient(url, http, callback)
            if not await owner_signs_in(checks, browser, rest, owner, args.workspace):
                return
            invited = await rest.send("POST", "/v1/invitations", args.workspace,
                                      {"email": person.email, "role": "finance"})  # fmt: skip
            checks.record(
                f"owner: POST /v1/invitations invites {person.email} as finance",
                invited.status_code == 201
                and (invited.json().get("status"), invited.json().get("role")) == ("pending", "finance"),
                body(invited),
            )
            await person_works(checks, browser, url, rest, person, args.workspace)
            await stranger_is_refused(checks, browser, rest, stranger, args.workspace)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url")
    ap.add_argument("workspace")
    ap.add_argument("--owner", required=True)
    ap.add_argument("--person", required=True)
    ap.add_argument("--stranger", required=True)
    ap.add_argument("--label", default="people")
    args = ap.parse_args()
    checks = Checks(args.label)
    started = time.monotonic()
    try:
        asyncio.run(run(args, checks))
    except Exception as e:
        checks.record("the flow ran to its end", False, describe(e))
    checks.info(f"took {time.monotonic() - started:.1f}s")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
