#!/usr/bin/env python3
"""End-to-end check of the server with the fastmcp client (PyPI `fastmcp`, built on `mcp`).

Usage: fastmcp_client.py URL --mode MODE [--header "Name: value"]... [--expect-version VERSION]
  URL    the MCP endpoint, e.g. http://127.0.0.1:8080/mcp, or a view of it
         (.../mcp/x/payables,receivables, .../mcp/readonly, .../mcp/x/payables/readonly),
         or find mode (.../mcp/find, .../mcp/find/readonly)
  MODE   `fastmcp.Client(mode=...)` in fastmcp 4.1.6:
           auto    probe `server/discover`, fall back to `initialize` (-> 2026-07-28 here)
           legacy  the `initialize` handshake (-> 2025-06-18)
  --header  an extra HTTP header on every request, e.g. "X-MCP-Find: true"
The bearer token comes from $KFIN_TOKEN, sent by the transport as an
`Authorization: Bearer ...` header. The view the client expects comes from the URL's
path and the X-MCP-* headers (catalogue.py, SPEC §5.4, §5.5). In find mode every
catalogue tool but finance_workspaces_list is called through the runner of its class
(`finance_tools_run_read` ... with `{"tool": NAME, "arguments": {...}}`).

What fastmcp adds to the other clients: `Client.call_tool` turns `structuredContent`
into typed Python data through the tool's `outputSchema` (its JSON-Schema-to-type
converter, `$ref`/`$defs` and nullable types included) and leaves `.data` empty when it
cannot; it also re-reads tools/list on its own to find a schema.

Checks, each printed as `PASS name` or `FAIL name: why`:
  * the negotiated protocol version is the expected one;
  * tools/list is exactly the view's part of the catalogue, in the contract's order
    (catalogue.listing_checks: first tool, money-flow order, the first 40 on the full
    list, no write tool on a read-only view); in find mode exactly the workspaces
    tool, finance_tools_search and the view's runners, each annotated as its class;
  * finance_workspaces_list and the view's read tools (finance_payables_list with
    filters and a projection, finance_receivables_list, finance_accounts_get) answer
    results that are not errors, whose text is the same JSON as structuredContent, and
    that fastmcp typed through the outputSchema (`.data` is set). In find mode the
    runners have no outputSchema (fastmcp hands back the raw JSON), so the runner's
    structuredContent is typed with fastmcp's own converter through the tool's
    outputSchema as finance_tools_search {names: [NAME], detail: full} answers it;
  * find mode: finance_tools_search finds finance_payables_list first for "contas a
    pagar vencidas" (read runner), only tools of the view, and with detail full the
    schemas (catalogue.search_query_checks, search_full_checks);
  * on a view, tools outside it are refused with JSON-RPC -32602 (unknown tool); in
    find mode the refusals of catalogue.find_refusals (-32602 for a catalogue tool by
    its own name and for the write runners of a read-only view, isError unknown_tool
    for a tool outside the view through a runner, wrong_runner for a tool of another
    class).
Exit status 0 only if every check passed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.utilities.json_schema_type import json_schema_to_type_adapter
from mcp.shared.exceptions import MCPError

from catalogue import (
    client_token,
    client_command_line,
    DEMO_ACCOUNT_ID,
    DEMO_WORKSPACE_ID,
    PAYABLES_DECEMBER,
    Checks,
    account_check,
    describe,
    payables_december_check,
    REFUSAL_ARGUMENTS,
    SEARCH_QUERY,
    SEARCH_TOOL,
    WORKSPACES_TOOL,
    View,
    find_refusals,
    listing_checks,
    refused_tools,
    search_full_checks,
    search_full_target,
    search_query_checks,
    view_of,
)

DEFAULT_EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-06-18"}


async def output_schema(client: Client, name: str) -> Any:
    """Find mode: the outputSchema of catalogue tool `name`, as the search answers it."""
    result = await client.call_tool(SEARCH_TOOL, {"names": [name], "detail": "full"}, raise_on_error=False)
    found = (result.structured_content or {}).get("tools") or [{}]
    return found[0].get("outputSchema")


async def read(client: Client, checks: Checks, name: str, arguments: dict[str, Any], view: View | None = None) -> Any:
    """Calls a read tool that must succeed (in find mode through its runner); checks
    text == structuredContent and the typed `.data`; answers the JSON, or None after a
    failed check."""
    target, args = view.call(name, arguments) if view else (name, arguments)
    result = await client.call_tool(target, args, raise_on_error=False)
    shown = f"{name} {json.dumps(arguments, ensure_ascii=False)}" if name == SEARCH_TOOL else name
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    if result.is_error or not texts:
        checks.record(f"{shown} answers a result", False, f"isError={result.is_error}: {texts[:1]}")
        return None
    payload = json.loads(texts[0])
    checks.record(
        f"{shown}: structuredContent is the text's JSON",
        result.structured_content is None or result.structured_content == payload,
        f"structuredContent {json.dumps(result.structured_content)[:200]}",
    )
    if result.structured_content is not None and target != name:
        schema = await output_schema(client, name)
        try:
            typed = json_schema_to_type_adapter(schema).validate_python(result.structured_content) if schema else None
            why = "no outputSchema in the search's answer"
        except Exception as e:
            typed, why = None, f"{type(e).__name__}: {str(e)[:300]}"
        checks.record(
            f"{name} through {target}: fastmcp types structuredContent through the outputSchema the search answers",
            typed is not None,
            why,
        )
    elif result.structured_content is not None and name != SEARCH_TOOL:  # the search has no outputSchema
        checks.record(
            f"{name}: fastmcp typed structuredContent through the outputSchema",
            result.data is not None,
            "Client.call_tool left .data empty (its schema-to-type conversion failed; see the log above)",
        )
    return payload


async def exercise(client: Client, view: View, expect_version: str, checks: Checks) -> None:
    version = client.protocol_version
    checks.record(f"protocol version {expect_version}", version == expect_version, f"negotiated {version!r}")

    tools = await client.list_tools()
    for name, passed, why in listing_checks(view, tools):
        checks.record(name, passed, why)

    workspaces = await read(client, checks, WORKSPACES_TOOL, {})
    if workspaces is not None:
        ids = [w.get("id") for w in workspaces.get("data", [])]
        checks.record(f"{WORKSPACES_TOOL} lists the demo workspace", DEMO_WORKSPACE_ID in ids, f"ids {ids}")

    if view.find:
        found = await read(client, checks, SEARCH_TOOL, SEARCH_QUERY)
        if found is not None:
            for name, passed, why in search_query_checks(view, found):
                checks.record(name, passed, why)
        target = search_full_target(view)
        found = await read(client, checks, SEARCH_TOOL, {"names": [target], "detail": "full"})
        if found is not None:
            for name, passed, why in search_full_checks(view, target, found):
                checks.record(name, passed, why)

    if view.shows("finance_payables_list"):
        page = await read(client, checks, "finance_payables_list", PAYABLES_DECEMBER, view)
        if page is not None:
            checks.record(*payables_december_check(page))
    if view.shows("finance_receivables_list"):
        page = await read(client, checks, "finance_receivables_list", {"limit": 5}, view)
        if page is not None:
            checks.record("finance_receivables_list answers rows", bool(page["data"]), f"got {json.dumps(page)[:300]}")
    if view.shows("finance_accounts_get"):
        account = await read(client, checks, "finance_accounts_get", {"id": DEMO_ACCOUNT_ID}, view)
        if account is not None:
            checks.record(*account_check(account))

    for case in find_refusals(view):
        try:
            result = await client.call_tool(case.name, case.arguments, raise_on_error=False)
            texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
            checks.record(case.check, *case.judge(None, result.is_error, json.loads(texts[0]) if texts else None))
        except MCPError as e:
            checks.record(case.check, *case.judge(e.code, None, None))
        except Exception as e:
            checks.record(case.check, False, describe(e))
    for name in [] if view.find else refused_tools(view):
        check = f"{name} outside the view [{view.label}] is refused with -32602"
        try:
            result = await client.call_tool(name, REFUSAL_ARGUMENTS[name], raise_on_error=False)
            checks.record(check, False, f"answered a result (isError={result.is_error}): {result.content!r:.300}")
        except MCPError as e:
            checks.record(check, e.code == -32602, f"error {e.code}: {e.message}")
        except Exception as e:
            checks.record(check, False, describe(e))


async def run(url: str, token: str, mode: str, extra: dict[str, str], expect_version: str, checks: Checks) -> None:
    view = view_of(url, extra)
    try:
        transport = StreamableHttpTransport(url, headers={**extra, "Authorization": f"Bearer {token}"})
        async with Client(transport, mode=mode, timeout=30, name="kfin-e2e-fastmcp") as client:
            await exercise(client, view, expect_version, checks)
    except Exception as e:  # reported as a failed check, with the library's own message
        checks.record("client connection", False, describe(e))


def main() -> int:
    args, extra = client_command_line(__doc__, DEFAULT_EXPECTED_VERSION)
    token = client_token("fastmcp")
    if token is None:
        return 1
    shown = " ".join([args.url, *(f"[{k}: {v}]" for k, v in extra.items())])
    checks = Checks(f"fastmcp[{args.mode}] {shown}")
    expect = args.expect_version or DEFAULT_EXPECTED_VERSION[args.mode]
    asyncio.run(run(args.url, token, args.mode, extra, expect, checks))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
