#!/usr/bin/env python3
"""End-to-end check of the server with the official MCP Python client library (PyPI `mcp`).

Usage: python_client.py URL --mode MODE [--header "Name: value"]... [--expect-version VERSION]
  URL    the MCP endpoint, e.g. http://127.0.0.1:8080/ (or .../mcp), or a view of it
         (.../mcp/x/payables,receivables, .../mcp/readonly, .../mcp/x/payables/readonly),
         or find mode (.../mcp/find, .../mcp/find/readonly)
  MODE   how the library picks the protocol era (`mcp.Client(mode=...)` in mcp 2.3.0):
           auto        probe `server/discover` at 2026-07-28, fall back to `initialize`
                       only if the server is not a 2026 server
           2026-07-28  adopt 2026-07-28 directly, no probe
           legacy      the `initialize` handshake (the library offers 2025-11-25; the
                       server settles on 2025-06-18)
  --header  an extra HTTP header on every request, e.g. "X-MCP-Toolsets: payables" or
            "X-MCP-Find: true"
The bearer token comes from $KFIN_TOKEN and is sent as `Authorization: Bearer ...` on
every request, over Streamable HTTP. The view the client expects comes from the URL's
path and the X-MCP-* headers (catalogue.py, SPEC §5.4, §5.5).

In find mode (SPEC §5.5) every catalogue tool below except finance_workspaces_list is
called through the runner of its class, `finance_tools_run_read|_write|_destructive`
with `{"tool": NAME, "arguments": {...}}` (catalogue.View.call), and must answer exactly
what the direct call answers; the checks are the same unless said otherwise.

Checks, each printed as `PASS name` or `FAIL name: why`:
  * the negotiated protocol version is the expected one;
  * tools/list (every page) is exactly the view's part of the catalogue, starting with
    `finance_workspaces_list`, in the money-flow order; on an unnarrowed list the first
    40 tools hold every payables and receivables tool; a read-only view lists no tool
    without `readOnlyHint` (catalogue.listing_checks). In find mode it is exactly
    finance_workspaces_list, finance_tools_search and the runners of the classes the
    view offers, in that order (all three on /mcp/find, only finance_tools_run_read on
    a read-only view), the read runner and the search annotated readOnlyHint true, the
    write runner readOnlyHint false and destructiveHint false, the destructive runner
    destructiveHint true;
  * find mode: finance_tools_search {query: "contas a pagar vencidas"} answers
    finance_payables_list first with runner finance_tools_run_read, and only tools of
    the view, each with name, title, description and the runner of its class (at most
    8); {names: [finance_payables_list], detail: full} answers that tool with its
    inputSchema, outputSchema and annotations; the text content is the same JSON as
    structuredContent;
  * calling finance_workspaces_list returns a result that is not an error, whose text
    content is JSON that contains the demo workspace id (and so does structuredContent,
    when present);
  * read tools of the view: `finance_payables_list` with filters, sort and a projection
    answers only pending payables due from December with only the projected fields,
    `finance_receivables_list` answers projected rows, and `finance_accounts_get` the
    demo checking account with its balance;
  * on a view, tools outside it (a write and a destructive tool on a read-only view, a
    tool of another toolset on a toolset view) are refused with JSON-RPC -32602, as an
    unknown tool is;
  * find mode refusals (catalogue.find_refusals): a catalogue tool called by its own
    name, and on a read-only view the write and destructive runners, are JSON-RPC
    -32602; a tool outside the view (and a name that does not exist) through a runner
    is an isError result, bad_request with details {field: tool, reason: unknown_tool};
    a tool of the view through the runner of another class is bad_request with details
    {field: tool, reason: wrong_runner, runner: <its runner>};
  * on the full list at 2026-07-28 (modes auto and 2026-07-28; in find mode too, the
    create through finance_tools_run_write, the settle and the cancel through
    finance_tools_run_destructive), a destructive tool
    confirmed through the library's own multi round-trip driver: a new payable
    (finance_payables_create) is settled with finance_payables_settle; the server asks
    through form elicitation, the client's elicitation callback sees the record and the
    amount in R$ and accepts, and afterwards the payable is paid, the account's balance
    moved by its amount exactly once and the ledger holds exactly one transaction with
    its billing_id. A declined elicitation (finance_payables_cancel) is an error result
    in the server's words (its text the envelope, no structuredContent) and changes
    nothing;
  * errors in the server's words (catalogue.error_cases), with the library validating
    structured content against output schemas: finance_payables_list {limit: 100000}
    (bad_request naming the bounds) and finance_payables_get of an id that names nothing
    (not_found), and on the legacy era finance_payables_delete (refused, naming protocol
    2026-07-28): isError, the envelope as text, no structuredContent;
  * on the full list on the legacy era, the same destructive tools are refused (an error
    result naming protocol 2026-07-28) and change nothing (in find mode: through
    finance_tools_run_destructive, refused the same way).
Exit status 0 only if every check passed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from decimal import Decimal
from typing import Any

import httpx2
from mcp import Client, types
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from catalogue import (
    client_token,
    client_command_line,
    DEMO_ACCOUNT_ID,  # "Conta corrente Itaú", the demo checking account
    DEMO_COMPANY_ID,
    DEMO_PENDING_PAYABLE_ID,  # "Aluguel de dezembro", pending, due 2026-12-10
    DEMO_WORKSPACE_ID,
    PAYABLES_DECEMBER,
    REFUSAL_ARGUMENTS,
    SEARCH_QUERY,
    SEARCH_TOOL,
    WORKSPACES_TOOL,
    Checks,
    View,
    account_check,
    describe,
    error_cases,
    find_refusals,
    listing_checks,
    payables_december_check,
    refused_tools,
    search_full_checks,
    search_full_target,
    search_query_checks,
    view_of,
)

DEFAULT_EXPECTED_VERSION = {"auto": "2026-07-28", "2026-07-28": "2026-07-28", "legacy": "2025-06-18"}


def contains_value(node: Any, wanted: str) -> bool:
    """True if `wanted` is a string value anywhere in the JSON tree `node`."""
    if isinstance(node, str):
        return node == wanted
    if isinstance(node, dict):
        return any(contains_value(v, wanted) for v in node.values())
    if isinstance(node, list):
        return any(contains_value(v, wanted) for v in node)
    return False


async def exercise(client: Client, view: View, expect_version: str, checks: Checks) -> None:
    version = client.protocol_version
    checks.record(f"protocol version {expect_version}", version == expect_version, f"negotiated {version!r}")

    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(50):  # a bound on pages, so a looping cursor cannot hang the test
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    for name, passed, why in listing_checks(view, tools):
        checks.record(name, passed, why)

    result = await client.call_tool(WORKSPACES_TOOL, {})
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    checks.record(f"{WORKSPACES_TOOL} result is not an error", not result.is_error, f"isError: {texts[:1]}")
    parsed: Any = None
    why = f"no text content in {result.content!r:.300}"
    if texts:
        try:
            parsed = json.loads(texts[0])
        except ValueError as e:
            why = f"text content is not JSON ({e}): {texts[0][:300]}"
    checks.record(
        f"{WORKSPACES_TOOL} JSON includes demo workspace {DEMO_WORKSPACE_ID}",
        parsed is not None and contains_value(parsed, DEMO_WORKSPACE_ID),
        why if parsed is None else f"got {texts[0][:300]}",
    )
    if result.structured_content is not None:
        checks.record(
            f"{WORKSPACES_TOOL} structuredContent includes the demo workspace",
            contains_value(result.structured_content, DEMO_WORKSPACE_ID),
            f"got {json.dumps(result.structured_content)[:300]}",
        )

    calls = Routed(client, view)
    if view.find:
        await search(calls, view, checks)
    await read_tools(calls, view, checks)
    await refusals(client, view, checks)


class Routed:
    """Calls catalogue tools as the view wants them called: directly, or in find mode
    through the runner of their class (catalogue.View.call)."""

    def __init__(self, client: Client, view: View) -> None:
        self.client = client
        self.view = view

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        target, args = self.view.call(name, arguments)
        return await self.client.call_tool(target, args)


async def search(calls: Routed, view: View, checks: Checks) -> None:
    """Find mode: finance_tools_search finds the tools of the view."""
    try:
        for name, passed, why in search_query_checks(view, await ok(calls.client, SEARCH_TOOL, SEARCH_QUERY)):
            checks.record(name, passed, why)
        target = search_full_target(view)
        found = await ok(calls.client, SEARCH_TOOL, {"names": [target], "detail": "full"})
        for name, passed, why in search_full_checks(view, target, found):
            checks.record(name, passed, why)
    except Exception as e:
        checks.record(SEARCH_TOOL, False, describe(e))


async def refusals(client: Client, view: View, checks: Checks) -> None:
    """Tools outside the view: JSON-RPC -32602, exactly as an unknown tool (find mode:
    catalogue.find_refusals)."""
    for case in find_refusals(view):
        try:
            is_error, payload = await tool_json(client, case.name, case.arguments)
            checks.record(case.check, *case.judge(None, is_error, payload))
        except MCPError as e:
            checks.record(case.check, *case.judge(e.code, None, None))
        except Exception as e:
            checks.record(case.check, False, describe(e))
    if view.find:
        return
    for name in refused_tools(view):
        try:
            result = await client.call_tool(name, REFUSAL_ARGUMENTS[name])
            checks.record(
                f"{name} outside the view [{view.label}] is refused with -32602",
                False,
                f"answered a result (isError={result.is_error}): {result.content!r:.300}",
            )
        except MCPError as e:
            checks.record(
                f"{name} outside the view [{view.label}] is refused with -32602",
                e.code == -32602,
                f"error {e.code}: {e.message}",
            )
        except Exception as e:
            checks.record(f"{name} outside the view [{view.label}] is refused with -32602", False, describe(e))


async def error_results(client: Routed, view: View, legacy: bool, checks: Checks) -> None:
    """Errors shown in the server's words, the library validating output schemas
    (catalogue.error_cases)."""
    for case in error_cases(view, legacy):
        try:
            result = await client.call_tool(case.name, case.arguments)
            texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
            payload = json.loads(texts[0]) if texts else None
            checks.record(case.check, *case.judge(result.is_error, result.structured_content, payload))
        except Exception as e:
            checks.record(case.check, False, describe(e))


class ToolFailed(Exception):
    """A tool call that had to succeed answered an error result."""


async def tool_json(client: Client | Routed, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """Calls a tool; answers (is_error, the JSON of its text content)."""
    result = await client.call_tool(name, arguments)
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    payload = json.loads(texts[0]) if texts else None
    if result.structured_content is not None and result.structured_content != payload:
        raise ToolFailed(f"{name}: structuredContent differs from the text content")
    return bool(result.is_error), payload


async def ok(client: Client | Routed, name: str, arguments: dict[str, Any]) -> Any:
    is_error, payload = await tool_json(client, name, arguments)
    if is_error:
        raise ToolFailed(f"{name} answered an error: {json.dumps(payload)[:300]}")
    return payload


async def read_tools(client: Routed, view: View, checks: Checks) -> None:
    try:
        if view.shows("finance_payables_list"):
            checks.record(*payables_december_check(await ok(client, "finance_payables_list", PAYABLES_DECEMBER)))
        if view.shows("finance_receivables_list"):
            page = await ok(client, "finance_receivables_list", {"limit": 5, "fields": ["id", "status", "amount"]})
            rows = page["data"]
            checks.record(
                "finance_receivables_list answers projected rows",
                bool(rows) and all(set(r) == {"id", "status", "amount"} for r in rows),
                f"got {json.dumps(page)[:400]}",
            )
        if view.shows("finance_accounts_get"):
            checks.record(*account_check(await ok(client, "finance_accounts_get", {"id": DEMO_ACCOUNT_ID})))
    except Exception as e:
        checks.record("read tools", False, describe(e))


class Elicitations:
    """The client's elicitation callback: answers as `answer` says and remembers each message."""

    def __init__(self) -> None:
        self.answer = "accept"
        self.messages: list[str] = []

    async def __call__(self, context: ClientRequestContext, params: Any) -> types.ElicitResult:
        self.messages.append(getattr(params, "message", ""))
        if self.answer == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action=self.answer)


async def balance(client: Routed) -> Decimal:
    return Decimal((await ok(client, "finance_accounts_get", {"id": DEMO_ACCOUNT_ID}))["balance"])


async def settlement_transactions(client: Routed, payable_id: str) -> int:
    """How many ledger transactions of the demo account carry this payable's billing_id."""
    found = 0
    cursor = None
    for _ in range(50):
        args: dict[str, Any] = {"filters": {"financial_account_id": DEMO_ACCOUNT_ID, "auto_created": True}, "limit": 100}
        if cursor:
            args["cursor"] = cursor
        page = await ok(client, "finance_transactions_list", args)
        found += sum(1 for t in page["data"] if t.get("billing_id") == payable_id)
        cursor = page["meta"]["next_cursor"]
        if not cursor:
            break
    return found


async def new_payable(client: Routed, label: str) -> dict[str, Any]:
    return await ok(
        client,
        "finance_payables_create",
        {
            "company_id": DEMO_COMPANY_ID,
            "description": label,
            "amount": "123.45",
            "due_date": "2026-12-28",
            "person_name": "Fornecedor do teste",
            "idempotency_key": str(uuid.uuid4()),
        },
    )


async def confirmation(client: Routed, elicitations: Elicitations, checks: Checks) -> None:
    """A destructive tool through the library's multi round-trip driver (2026-07-28)."""
    try:
        label = f"Conta do cliente Python {uuid.uuid4().hex[:8]}"
        payable = await new_payable(client, label)
        before = await balance(client)
        elicitations.answer = "accept"
        elicitations.messages.clear()
        is_error, paid = await tool_json(
            client,
            "finance_payables_settle",
            {"id": payable["id"], "payment_date": "2026-12-28", "financial_account_id": DEMO_ACCOUNT_ID},
        )
        messages = list(elicitations.messages)
        checks.record(
            "finance_payables_settle asked the user once through form elicitation",
            len(messages) == 1,
            f"{len(messages)} elicitations: {messages}",
        )
        checks.record(
            "the elicitation names the record and the amount in R$",
            bool(messages) and label in messages[0] and "R$ 123,45" in messages[0] and "Conta corrente Itaú" in messages[0],
            f"message: {messages[:1]}",
        )
        checks.record(
            "the accepted settle answers the paid payable",
            not is_error and paid.get("status") == "paid",
            f"isError={is_error}: {json.dumps(paid)[:300]}",
        )
        record = await ok(client, "finance_payables_get", {"id": payable["id"], "fields": ["status", "transaction_id"]})
        checks.record("the payable is paid", record.get("status") == "paid", f"got {record}")
        after = await balance(client)
        checks.record(
            "the account balance moved by the amount exactly once",
            before - after == Decimal("123.45"),
            f"before {before}, after {after}",
        )
        count = await settlement_transactions(client, payable["id"])
        checks.record("exactly one ledger transaction with the payable's billing_id", count == 1, f"found {count}")

        declined = await new_payable(client, f"Conta recusada {uuid.uuid4().hex[:8]}")
        elicitations.answer = "decline"
        result = await client.call_tool("finance_payables_cancel", {"id": declined["id"]})
        texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
        refused = json.loads(texts[0]) if texts else None
        checks.record(
            "a declined elicitation is an error result in the server's words (text only, no structuredContent)",
            bool(result.is_error)
            and result.structured_content is None
            and "nothing changed" in (refused or {}).get("error", {}).get("message", ""),
            f"isError={result.is_error}, structuredContent={result.structured_content}: {json.dumps(refused)[:300]}",
        )
        record = await ok(client, "finance_payables_get", {"id": declined["id"], "fields": ["status"]})
        checks.record("the declined cancel changed nothing", record.get("status") == "pending", f"got {record}")
    except Exception as e:
        checks.record("confirmation of a destructive tool", False, describe(e))


async def legacy_refusal(client: Routed, checks: Checks) -> None:
    """Destructive tools on the legacy era: refused, nothing changes."""
    try:
        before = await balance(client)
        is_error, refused = await tool_json(
            client,
            "finance_payables_settle",
            {"id": DEMO_PENDING_PAYABLE_ID, "payment_date": "2026-12-10", "financial_account_id": DEMO_ACCOUNT_ID},
        )
        checks.record(
            "finance_payables_settle on the legacy era is refused",
            is_error and "2026-07-28" in json.dumps(refused),
            f"isError={is_error}: {json.dumps(refused)[:300]}",
        )
        record = await ok(client, "finance_payables_get", {"id": DEMO_PENDING_PAYABLE_ID, "fields": ["status"]})
        after = await balance(client)
        checks.record(
            "the refused settle changed nothing",
            record.get("status") == "pending" and before == after,
            f"status {record}, balance {before} -> {after}",
        )
    except Exception as e:
        checks.record("legacy refusal of a destructive tool", False, describe(e))


async def run(url: str, token: str, mode: str, extra: dict[str, str], expect_version: str, checks: Checks) -> None:
    headers = {**extra, "Authorization": f"Bearer {token}"}
    view = view_of(url, extra)
    elicitations = Elicitations()
    try:
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0)) as http:
            # The server is stateless (no Mcp-Session-Id): nothing to terminate with DELETE.
            transport = streamable_http_client(url, http_client=http, terminate_on_close=False)
            # The elicitation callback makes the client declare form elicitation.
            async with Client(transport, mode=mode, read_timeout_seconds=30, elicitation_callback=elicitations) as client:
                await exercise(client, view, expect_version, checks)
                await error_results(Routed(client, view), view, mode == "legacy", checks)
                # The money-moving flows need the whole catalogue (accounts, transactions).
                # In find mode they run through the runners (Routed).
                if not view.narrowed and mode == "legacy":
                    await legacy_refusal(Routed(client, view), checks)
                elif not view.narrowed:
                    await confirmation(Routed(client, view), elicitations, checks)
    except Exception as e:  # reported as a failed check, with the library's own message
        checks.record("client connection", False, describe(e))


def main() -> int:
    args, extra = client_command_line(__doc__, DEFAULT_EXPECTED_VERSION)
    token = client_token("python")
    if token is None:
        return 1
    expect = args.expect_version or DEFAULT_EXPECTED_VERSION[args.mode]
    shown = " ".join([args.url, *(f"[{k}: {v}]" for k, v in extra.items())])
    checks = Checks(f"python[{args.mode}] {shown}")
    asyncio.run(run(args.url, token, args.mode, extra, expect, checks))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
