#!/usr/bin/env python3
"""End-to-end check of the server with the official MCP Python client library (PyPI `mcp`).

Usage: python_client.py URL --mode MODE [--expect-version VERSION]
  URL    the MCP endpoint, e.g. http://127.0.0.1:8080/ (or .../mcp)
  MODE   how the library picks the protocol era (`mcp.Client(mode=...)` in mcp 2.3.0):
           auto        probe `server/discover` at 2026-07-28, fall back to `initialize`
                       only if the server is not a 2026 server
           2026-07-28  adopt 2026-07-28 directly, no probe
           legacy      the `initialize` handshake (the library offers 2025-11-25; the
                       server settles on 2025-06-18)
The bearer token comes from $KFIN_TOKEN and is sent as `Authorization: Bearer ...` on
every request, over Streamable HTTP.

Checks, each printed as `PASS name` or `FAIL name: why`:
  * the negotiated protocol version is the expected one;
  * tools/list (every page) includes `finance_workspaces_list`, first in the list;
  * calling it returns a result that is not an error, whose text content is JSON that
    contains the demo workspace id (and so does structuredContent, when present).
Exit status 0 only if every check passed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

DEMO_WORKSPACE_ID = "2b93f876-769a-4bdc-b23e-304957f313b4"
WORKSPACES_TOOL = "finance_workspaces_list"
DEFAULT_EXPECTED_VERSION = {"auto": "2026-07-28", "2026-07-28": "2026-07-28", "legacy": "2025-06-18"}


class Checks:
    def __init__(self, label: str) -> None:
        self.label = label
        self.failed = 0

    def record(self, name: str, ok: bool, why: str = "") -> bool:
        if ok:
            print(f"PASS {self.label}: {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {self.label}: {name}: {why}", flush=True)
        return ok


def describe(exc: BaseException) -> str:
    """The leaf exceptions of `exc` (task groups wrap them in ExceptionGroups)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


def contains_value(node: Any, wanted: str) -> bool:
    """True if `wanted` is a string value anywhere in the JSON tree `node`."""
    if isinstance(node, str):
        return node == wanted
    if isinstance(node, dict):
        return any(contains_value(v, wanted) for v in node.values())
    if isinstance(node, list):
        return any(contains_value(v, wanted) for v in node)
    return False


async def exercise(client: Client, expect_version: str, checks: Checks) -> None:
    version = client.protocol_version
    checks.record(f"protocol version {expect_version}", version == expect_version, f"negotiated {version!r}")

    names: list[str] = []
    cursor: str | None = None
    for _ in range(50):  # a bound on pages, so a looping cursor cannot hang the test
        page = await client.list_tools(cursor=cursor)
        names.extend(t.name for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    checks.record(
        f"tools/list includes {WORKSPACES_TOOL}", WORKSPACES_TOOL in names, f"{len(names)} tools: {names[:10]}"
    )
    checks.record(
        f"{WORKSPACES_TOOL} is the first tool",
        bool(names) and names[0] == WORKSPACES_TOOL,
        f"first is {names[0] if names else None!r}",
    )

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


async def run(url: str, token: str, mode: str, expect_version: str, checks: Checks) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0)) as http:
            # The server is stateless (no Mcp-Session-Id): nothing to terminate with DELETE.
            transport = streamable_http_client(url, http_client=http, terminate_on_close=False)
            async with Client(transport, mode=mode, read_timeout_seconds=30) as client:
                await exercise(client, expect_version, checks)
    except Exception as e:  # reported as a failed check, with the library's own message
        checks.record("client connection", False, describe(e))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url")
    ap.add_argument("--mode", default="auto", choices=sorted(DEFAULT_EXPECTED_VERSION))
    ap.add_argument("--expect-version")
    args = ap.parse_args()
    token = os.environ.get("KFIN_TOKEN", "").strip()
    if not token:
        print("FAIL python: setup: set KFIN_TOKEN to an MCP bearer token", flush=True)
        return 1
    expect = args.expect_version or DEFAULT_EXPECTED_VERSION[args.mode]
    checks = Checks(f"python[{args.mode}] {args.url}")
    asyncio.run(run(args.url, token, args.mode, expect, checks))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
