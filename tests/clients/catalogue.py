"""What the clients of tests/clients/ expect, view by view (SPEC §5.1, §5.4), and the
PASS/FAIL reporting they share.

Shared by python_client.py, fastmcp_client.py and inspector_client.py (node_client.mjs
carries the same facts in JavaScript). Stdlib only, so each client imports it from its
own folder.

The facts:
  * the catalogue, read from the server's listing (src/mcp/listing.tsv, which a Rust test
    keeps what the server lists): `finance_<resource>_<action>` in the order of
    tools/list, workspaces first; a tool with `readOnlyHint: true` reads, one with
    `destructiveHint: true` is destructive, every other one writes;
  * a view (`/mcp/x/{toolsets}`, `/mcp/readonly`, `/mcp/x/{toolsets}/readonly`, or the
    `X-MCP-Toolsets` / `X-MCP-Readonly` headers; path and header narrow to what both
    allow) lists finance_workspaces_list plus the tools of its toolsets, only the read
    ones when read-only;
  * on the default list, Cursor's 40-tool cut keeps every payables and receivables tool;
  * find mode (SPEC §5.5: `/mcp/find`, `/mcp/find/readonly`, or `X-MCP-Find: true` on
    any MCP path, narrowed by the toolset and read-only views) lists exactly
    finance_workspaces_list, finance_tools_search and the runners the caller can use
    (finance_tools_run_read, _write, _destructive: one per class of tool the view
    offers, with the annotations of that class); every other tool of the view is
    found with finance_tools_search and run through the runner of its class with
    `{tool, arguments}`, which answers what a direct tools/call answers. The class
    comes from the tool's annotations in the listing.
The demo owner's token grants every scope and the owner role, so for it the expected
list is exactly the view's part of the catalogue (in find mode: every runner whose
class the view offers).
"""

from __future__ import annotations

import argparse
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import unquote, urlsplit

class Checks:
    """Prints one `PASS label: name` / `FAIL label: name: why` line per check (run.sh
    counts them) and `INFO` lines, which are not counted."""

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

    def info(self, text: str) -> None:
        print(f"INFO {self.label}: {text}", flush=True)


def describe(exc: BaseException) -> str:
    """The leaf exceptions of `exc` (task groups wrap them in ExceptionGroups)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


# Resource -> actions, in the order of tools/list.
# The catalogue, in the order of tools/list, read from the server's own listing
# (src/mcp/listing.tsv: one line per tool, name then annotations; a Rust test keeps it
# what the server lists): adding a tool edits no client test. The toolsets are the
# views' names; a tool belongs to the longest one its name starts with.
LISTING = Path(__file__).resolve().parents[2] / "src" / "mcp" / "listing.tsv"
TOOLSETS = (
    "reports",
    "cash_flow",
    "payables",
    "receivables",
    "reconciliations",
    "transactions",
    "transfers",
    "accounts",
    "receipts",
    "attachments",
    "companies",
    "people",
    "categories",
    "cost_centers",
    "taxes",
    "automatic_rules",
    "banks",
)


def _listing() -> list[tuple[str, dict[str, Any]]]:
    rows = []
    for line in LISTING.read_text(encoding="utf-8").splitlines():
        name, annotations = line.split("\t")[:2]
        rows.append((name, json.loads(annotations)))
    return rows


def _catalogue(rows: list[tuple[str, dict[str, Any]]]) -> dict[str, tuple[str, ...]]:
    catalogue: dict[str, list[str]] = {}
    for name, _ in rows:
        resource = next(
            (r for r in sorted(("workspaces", *TOOLSETS), key=len, reverse=True) if name.startswith(f"finance_{r}_")),
            None,
        )
        if resource is None:
            raise ValueError(f"{LISTING}: {name} belongs to no toolset")
        catalogue.setdefault(resource, []).append(name[len(f"finance_{resource}_") :])
    return {r: tuple(actions) for r, actions in catalogue.items()}


_ROWS = _listing()
CATALOGUE: dict[str, tuple[str, ...]] = _catalogue(_ROWS)
READ_TOOLS = frozenset(name for name, annotations in _ROWS if annotations.get("readOnlyHint"))
DESTRUCTIVE_TOOLS = frozenset(name for name, annotations in _ROWS if annotations.get("destructiveHint"))
WORKSPACES_TOOL = "finance_workspaces_list"
CURSOR_LIMIT = 40

# Find mode (SPEC §5.5).
SEARCH_TOOL = "finance_tools_search"
READ_RUNNER = "finance_tools_run_read"
WRITE_RUNNER = "finance_tools_run_write"
DESTRUCTIVE_RUNNER = "finance_tools_run_destructive"
RUNNERS = (READ_RUNNER, WRITE_RUNNER, DESTRUCTIVE_RUNNER)


def tool_name(resource: str, action: str) -> str:
    return f"finance_{resource}_{action}"


def resource_of(name: str) -> str | None:
    """The catalogue resource of a tool name (longest match: cost_centers before …)."""
    for resource in sorted(CATALOGUE, key=len, reverse=True):
        if name.startswith(f"finance_{resource}_") and name[len(f"finance_{resource}_") :] in CATALOGUE[resource]:
            return resource
    return None


def is_read(name: str) -> bool:
    return name in READ_TOOLS


def runner_of(name: str) -> str | None:
    """The find-mode runner of a catalogue tool, from its action (None: not a tool this
    catalogue knows)."""
    if resource_of(name) is None:
        return None
    if name in READ_TOOLS:
        return READ_RUNNER
    if name in DESTRUCTIVE_TOOLS:
        return DESTRUCTIVE_RUNNER
    return WRITE_RUNNER


@dataclass(frozen=True)
class View:
    """Which part of the catalogue a URL (and its view headers) shows."""

    toolsets: frozenset[str] | None  # None: every toolset
    readonly: bool
    find: bool = False  # find mode: the search and the runners reach the view's tools

    @property
    def label(self) -> str:
        parts = ["all" if self.toolsets is None else ",".join(t for t in TOOLSETS if t in self.toolsets)]
        if self.readonly:
            parts.append("readonly")
        if self.find:
            parts.insert(0, "find")
        return "/".join(parts)

    def shows(self, name: str) -> bool:
        resource = resource_of(name)
        if resource is None:
            return False
        if resource != "workspaces" and self.toolsets is not None and resource not in self.toolsets:
            return False
        return not self.readonly or is_read(name)

    def catalogue_names(self) -> list[str]:
        """The catalogue tools this view offers the demo owner, in the contract's order
        (in find mode: the tools the search finds and the runners run)."""
        return [tool_name(r, a) for r, actions in CATALOGUE.items() for a in actions if self.shows(tool_name(r, a))]

    def runners(self) -> list[str]:
        """Find mode: the runners the demo owner can use here, one per class of tool the
        view offers (the workspaces tool is listed as itself and counts for none)."""
        offered = {runner_of(n) for n in self.catalogue_names() if n != WORKSPACES_TOOL}
        return [r for r in RUNNERS if r in offered]

    def expected_names(self) -> list[str]:
        """The tools this view lists for the demo owner, in the contract's order."""
        if self.find:
            return [WORKSPACES_TOOL, SEARCH_TOOL, *self.runners()]
        return self.catalogue_names()

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The tools/call (name, arguments) that runs catalogue tool `name` here: itself,
        or in find mode its runner with {tool, arguments} (the workspaces tool is listed,
        and called, as itself)."""
        if not self.find or name == WORKSPACES_TOOL:
            return name, arguments
        runner = runner_of(name)
        if runner is None:
            raise ValueError(f"{name} is not a catalogue tool: no runner for it")
        return runner, {"tool": name, "arguments": arguments}

    @property
    def narrowed(self) -> bool:
        return self.toolsets is not None or self.readonly


def view_of(url: str, headers: dict[str, str] | None = None) -> View:
    """The view that `url`'s path and the X-MCP-* headers ask for (SPEC §5.4, §5.5)."""
    path = unquote(urlsplit(url).path).rstrip("/")
    toolsets: frozenset[str] | None = None
    readonly = False
    find = False
    if path in ("/mcp/find", "/mcp/find/readonly"):
        find, readonly = True, path.endswith("/readonly")
    elif path.startswith("/mcp/x/"):
        rest = path[len("/mcp/x/") :]
        if rest.endswith("/readonly"):
            rest, readonly = rest[: -len("/readonly")], True
        toolsets = frozenset(t.strip() for t in rest.split(",") if t.strip())
    elif path == "/mcp/readonly":
        readonly = True
    for key, value in (headers or {}).items():
        if key.lower() == "x-mcp-toolsets":
            named = frozenset(t.strip() for t in value.split(",") if t.strip())
            toolsets = named if toolsets is None else toolsets & named
        elif key.lower() == "x-mcp-readonly" and value.strip().lower() == "true":
            readonly = True
        elif key.lower() == "x-mcp-find" and value.strip().lower() == "true":
            find = True
    return View(toolsets, readonly, find)


def client_command_line(doc: str | None, modes: Iterable[str]) -> tuple[argparse.Namespace, dict[str, str]]:
    """A client's command line (`doc` its help): the URL, `--mode` (one of `modes`, auto by
    default), `--header "Name: value"` (repeatable) and `--expect-version`; its arguments
    and the extra headers by name."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url")
    ap.add_argument("--mode", default="auto", choices=sorted(modes))
    ap.add_argument("--header", action="append", default=[], help="\"Name: value\", repeatable")
    ap.add_argument("--expect-version")
    args = ap.parse_args()
    return args, extra_headers(ap, args.header)


def client_token(client: str) -> str | None:
    """The MCP bearer token the client sends, from $KFIN_TOKEN; None, its setup failure
    printed, when it is not set."""
    token = os.environ.get("KFIN_TOKEN", "").strip()
    if not token:
        print(f"FAIL {client}: setup: set KFIN_TOKEN to an MCP bearer token", flush=True)
        return None
    return token


def extra_headers(ap: argparse.ArgumentParser, given: list[str]) -> dict[str, str]:
    """The `--header "Name: value"` options by name; one without a colon is a usage error."""
    extra: dict[str, str] = {}
    for h in given:
        key, sep, value = h.partition(":")
        if not sep:
            ap.error(f"--header wants 'Name: value', got {h!r}")
        extra[key.strip()] = value.strip()
    return extra


def annotation(tool: Any, key: str) -> Any:
    """An annotation of a tool given as a dict (JSON) or as a library object."""
    annotations = tool.get("annotations") if isinstance(tool, dict) else getattr(tool, "annotations", None)
    if annotations is None:
        return None
    if isinstance(annotations, dict):
        return annotations.get(key)
    # mcp 2.x names the fields in snake_case (read_only_hint); older objects camelCase.
    snake = "".join("_" + c.lower() if c.isupper() else c for c in key)
    if hasattr(annotations, snake):
        return getattr(annotations, snake)
    return getattr(annotations, key, None)


def no_write_check(view: View, tools: list[Any], names: list[str]) -> tuple[str, bool, str]:
    """A read-only view's tools/list: every tool readOnlyHint, none destructiveHint."""
    writing = [
        n for t, n in zip(tools, names)
        if annotation(t, "readOnlyHint") is not True or annotation(t, "destructiveHint") is True
    ]
    return (f"tools/list [{view.label}] has no write or destructive tool", not writing,
            f"not readOnlyHint, or destructiveHint: {writing[:8]}")


def listing_checks(view: View, tools: Iterable[Any]) -> list[tuple[str, bool, str]]:
    """The checks of one complete tools/list (every page) under `view`:
    (check name, passed, why-not). `tools` are dicts (JSON) or library Tool objects."""
    tools = list(tools)
    names = [t["name"] if isinstance(t, dict) else t.name for t in tools]
    expected = view.expected_names()
    checks: list[tuple[str, bool, str]] = []
    checks.append(
        (f"tools/list [{view.label}] starts with {WORKSPACES_TOOL}", bool(names) and names[0] == WORKSPACES_TOOL,
         f"first is {names[0] if names else None!r}")
    )
    if view.find:
        return checks + find_listing_checks(view, tools, names)
    missing = [n for n in expected if n not in names]
    extra = [n for n in names if n not in expected]
    checks.append(
        (f"tools/list [{view.label}] is exactly the view's {len(expected)} tools", not missing and not extra
         and len(names) == len(set(names)),
         f"{len(names)} listed; missing {missing[:8]}; not in the view {extra[:8]}")
    )
    ranks = {r: i for i, r in enumerate(CATALOGUE)}
    seq = [ranks.get(resource_of(n) or "", len(ranks)) for n in names]
    checks.append(
        (f"tools/list [{view.label}] in the money-flow order (workspaces, reports, cash flow, payables, receivables, …)",
         seq == sorted(seq),
         "resource order: " + ", ".join(dict.fromkeys(resource_of(n) or n for n in names)))
    )
    if view.toolsets is None:
        wanted = [tool_name(r, a) for r in ("payables", "receivables") for a in CATALOGUE[r] if view.shows(tool_name(r, a))]
        cut = names[:CURSOR_LIMIT]
        lost = [n for n in wanted if n not in cut]
        checks.append(
            (f"the first {CURSOR_LIMIT} tools [{view.label}] include every payables and receivables tool", not lost,
             f"beyond the first {CURSOR_LIMIT}: {lost}")
        )
    if view.readonly:
        checks.append(no_write_check(view, tools, names))
    return checks


# The annotations each find-mode meta tool must carry, by the class it runs (MCP's
# defaults: readOnlyHint false, destructiveHint true, so the false ones must be explicit).
FIND_ANNOTATIONS: dict[str, dict[str, bool]] = {
    SEARCH_TOOL: {"readOnlyHint": True},
    READ_RUNNER: {"readOnlyHint": True},
    WRITE_RUNNER: {"readOnlyHint": False, "destructiveHint": False},
    DESTRUCTIVE_RUNNER: {"readOnlyHint": False, "destructiveHint": True},
}


def find_listing_checks(view: View, tools: list[Any], names: list[str]) -> list[tuple[str, bool, str]]:
    """Find mode's tools/list: exactly the workspaces tool, the search and the runners
    of the view's classes, in that order; each runner annotated as the class it runs."""
    expected = view.expected_names()
    checks = [
        (f"tools/list [{view.label}] is exactly {', '.join(expected)} in this order", names == expected,
         f"listed {names}")
    ]
    for tool, name in zip(tools, names):
        wanted = FIND_ANNOTATIONS.get(name)
        if wanted is None:
            continue
        got = {key: annotation(tool, key) for key in wanted}
        checks.append(
            (f"{name} [{view.label}] is annotated " + ", ".join(f"{k}={v}" for k, v in wanted.items()),
             all(got[k] is v for k, v in wanted.items()), f"got {got}")
        )
    if view.readonly:
        checks.append(no_write_check(view, tools, names))
    return checks


# finance_tools_search in find mode: a Portuguese query for overdue payables.
SEARCH_QUERY = {"query": "contas a pagar vencidas"}
SEARCH_DEFAULT_LIMIT = 8


def search_full_target(view: View) -> str:
    """The tool a `names` + `detail: full` search asks for: a read tool of the view that
    has an outputSchema."""
    for name in ("finance_payables_list", "finance_receivables_list", "finance_accounts_get"):
        if view.shows(name):
            return name
    return WORKSPACES_TOOL


def search_query_checks(view: View, found: Any) -> list[tuple[str, bool, str]]:
    """finance_tools_search {query: "contas a pagar vencidas"}: finance_payables_list
    first, with the read runner; every entry a tool of the view with the runner of its
    class, in summary detail (name, title, description, runner); at most the default 8."""
    entries = found.get("tools") if isinstance(found, dict) else None
    got = json.dumps(found)[:400]
    checks: list[tuple[str, bool, str]] = []
    if not isinstance(entries, list):
        return [(f"{SEARCH_TOOL} [{view.label}] answers a list of tools", False, f"got {got}")]
    if view.shows("finance_payables_list"):
        first = entries[0] if entries else {}
        checks.append(
            (f"{SEARCH_TOOL} \"contas a pagar vencidas\" [{view.label}] finds finance_payables_list first, run by"
             f" {READ_RUNNER}",
             first.get("name") == "finance_payables_list" and first.get("runner") == READ_RUNNER,
             f"got {got}")
        )
    wrong = []
    for e in entries:
        name = e.get("name")
        known = resource_of(name or "") is not None
        if set(e) != {"name", "title", "description", "runner"} or not all(isinstance(e[k], str) for k in e):
            wrong.append(f"{name}: keys {sorted(e)}")
        elif e["runner"] not in view.runners():
            wrong.append(f"{name}: runner {e['runner']} not listed here")
        elif known and (not view.shows(name) or e["runner"] != runner_of(name)):
            wrong.append(f"{name}: in the view {view.shows(name)}, runner {e['runner']}")
    checks.append(
        (f"{SEARCH_TOOL} [{view.label}] answers only tools of the view, each with name, title, description and the"
         f" runner of its class (at most {SEARCH_DEFAULT_LIMIT})",
         bool(entries) and not wrong and len(entries) <= SEARCH_DEFAULT_LIMIT,
         f"{len(entries)} tools; {wrong[:5]}")
    )
    return checks


def search_full_checks(view: View, name: str, found: Any) -> list[tuple[str, bool, str]]:
    """finance_tools_search {names: [name], detail: full}: that one tool, with its
    inputSchema, outputSchema and annotations."""
    entries = found.get("tools") if isinstance(found, dict) else None
    entry = entries[0] if isinstance(entries, list) and len(entries) == 1 else {}
    schema = entry.get("inputSchema")
    annotations = entry.get("annotations")
    ok = (
        entry.get("name") == name
        and entry.get("runner") == (runner_of(name) if name != WORKSPACES_TOOL else READ_RUNNER)
        and isinstance(schema, dict) and schema.get("type") == "object" and isinstance(schema.get("properties"), dict)
        and isinstance(entry.get("outputSchema"), dict)
        and isinstance(annotations, dict) and annotations.get("readOnlyHint") is True
    )
    return [
        (f"{SEARCH_TOOL} names=[{name}] detail=full [{view.label}] answers it with its inputSchema, outputSchema and"
         " annotations", ok, f"got {json.dumps(found)[:400]}")
    ]


@dataclass(frozen=True)
class FindRefusal:
    """A tools/call that find mode must refuse: `expect` is "-32602" (JSON-RPC error,
    as an unknown tool), "unknown_tool" or "wrong_runner" (an isError result with the
    bad_request envelope, `details` exactly {field: tool, reason[, runner]})."""

    check: str
    name: str  # the tool sent in tools/call
    arguments: dict[str, Any]
    expect: str
    runner: str | None = None  # wrong_runner: the runner the details name

    @property
    def details(self) -> dict[str, Any]:
        details: dict[str, Any] = {"field": "tool", "reason": self.expect}
        if self.runner:
            details["runner"] = self.runner
        return details

    def judge(self, rpc_code: int | None, is_error: bool | None, payload: Any) -> tuple[bool, str]:
        """(passed, why-not) for what the server answered: a JSON-RPC error code, or a
        result's isError and the JSON of its text content."""
        if self.expect == "-32602":
            if rpc_code is None:
                return False, f"answered a result (isError={is_error}): {json.dumps(payload)[:300]}"
            return rpc_code == -32602, f"error {rpc_code}"
        if rpc_code is not None:
            return False, f"JSON-RPC error {rpc_code}, not an isError result"
        error = payload.get("error") if isinstance(payload, dict) else None
        ok = is_error is True and isinstance(error, dict) and error.get("code") == "bad_request" and (
            error.get("details") == self.details
        )
        return ok, f"isError={is_error}: {json.dumps(payload)[:300]}"


@dataclass(frozen=True)
class ErrorCase:
    """An error a person meets early, which the client must show in the server's own words
    (SPEC §5): an isError result whose text is the error envelope and which carries no
    structuredContent — a client checks structured content against the tool's
    outputSchema, which describes the success, and would show its own schema failure."""

    check: str
    name: str  # the catalogue tool (in find mode, called through its runner)
    arguments: dict[str, Any]
    code: str
    words: tuple[str, ...]  # in the envelope's message

    def judge(self, is_error: bool | None, structured: Any, payload: Any) -> tuple[bool, str]:
        """(passed, why-not) for a result's isError, structuredContent and text's JSON."""
        error = payload.get("error") if isinstance(payload, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        ok = (
            is_error is True
            and structured is None
            and isinstance(message, str)
            and error.get("code") == self.code
            and all(w in message for w in self.words)
        )
        return ok, f"isError={is_error}, structuredContent={json.dumps(structured)[:100]}: {json.dumps(payload)[:300]}"


def error_cases(view: View, legacy: bool) -> list[ErrorCase]:
    """The errors shown in the server's words: a bad argument, an id that names nothing,
    and on the legacy era (which cannot confirm) a destructive tool refused."""
    cases = [
        ErrorCase(
            "a bad argument (finance_payables_list limit 100000) shows the server's message",
            "finance_payables_list",
            {"limit": 100000},
            "bad_request",
            ("between 1 and 100",),
        ),
        ErrorCase(
            "an id that names nothing (finance_payables_get) shows the server's message",
            "finance_payables_get",
            {"id": "b1110000-0001-4000-8000-0000000000ff"},
            "not_found",
            (),
        ),
    ]
    if legacy:
        cases.append(
            ErrorCase(
                "a refused confirmation (finance_payables_delete on the legacy era) shows the server's message",
                "finance_payables_delete",
                {"id": DEMO_PENDING_PAYABLE_ID},
                "forbidden",
                ("2026-07-28",),
            )
        )
    return [c for c in cases if view.shows(c.name)]


def find_refusals(view: View) -> list[FindRefusal]:
    """What a client tries in find mode and must see refused: a catalogue tool called
    by its own name; on a read-only view the write runners; a tool the view hides (or
    that does not exist) through a runner (isError unknown_tool: a hidden tool reads
    as one that does not exist, whatever its class); a tool of the view through the
    runner of another class (isError wrong_runner, naming the right runner)."""
    if not view.find:
        return []
    cases: list[FindRefusal] = []
    listed = view.runners()
    direct = search_full_target(view)
    if direct != WORKSPACES_TOOL:
        cases.append(
            FindRefusal(f"{direct} called by its own name [{view.label}] is refused with -32602", direct,
                        REFUSAL_ARGUMENTS[direct], "-32602")
        )
    for runner, name in ((WRITE_RUNNER, "finance_companies_create"), (DESTRUCTIVE_RUNNER, "finance_payables_settle")):
        if runner not in listed:
            cases.append(
                FindRefusal(f"{runner} [{view.label}] is refused with -32602", runner,
                            {"tool": name, "arguments": REFUSAL_ARGUMENTS[name]}, "-32602")
            )
    for name in refused_tools(view):
        runner = runner_of(name)
        via = runner if runner in listed else READ_RUNNER
        cases.append(
            FindRefusal(f"{name} outside the view [{view.label}] through {via} is unknown_tool", via,
                        {"tool": name, "arguments": REFUSAL_ARGUMENTS[name]}, "unknown_tool")
        )
    cases.append(
        FindRefusal(f"a tool that does not exist through {READ_RUNNER} [{view.label}] is unknown_tool", READ_RUNNER,
                    {"tool": "finance_payables_archive", "arguments": {}}, "unknown_tool")
    )
    for name, via in (
        ("finance_payables_settle", READ_RUNNER),
        ("finance_payables_list", WRITE_RUNNER),
        ("finance_payables_create", DESTRUCTIVE_RUNNER),
    ):
        if view.shows(name) and via in listed:
            right = runner_of(name)
            cases.append(
                FindRefusal(f"{name} through {via} [{view.label}] is wrong_runner naming {right}", via,
                            {"tool": name, "arguments": REFUSAL_ARGUMENTS[name]}, "wrong_runner", right)
            )
    return cases


def refused_tools(view: View) -> list[str]:
    """Tools outside `view` that a client should try and see refused (-32602): one write
    and one destructive tool when read-only, read tools of other toolsets when narrowed
    to toolsets."""
    candidates = []
    if view.readonly:
        candidates += ["finance_payables_settle", "finance_companies_create"]
    if view.toolsets is not None:
        candidates += ["finance_accounts_get", "finance_receivables_list", "finance_companies_create"]
    return [n for n in dict.fromkeys(candidates) if not view.shows(n)]


# Arguments that would be valid for the tool if it were in the view, so that a refusal
# can only come from the view.
DEMO_WORKSPACE_ID = "2b93f876-769a-4bdc-b23e-304957f313b4"
DEMO_COMPANY_ID = "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11"
DEMO_ACCOUNT_ID = "a1b2c3d4-0001-4000-8000-000000000001"
DEMO_PENDING_PAYABLE_ID = "b1110000-0001-4000-8000-000000000001"
REFUSAL_ARGUMENTS: dict[str, dict[str, Any]] = {
    "finance_payables_settle": {
        "id": DEMO_PENDING_PAYABLE_ID, "payment_date": "2026-12-10", "financial_account_id": DEMO_ACCOUNT_ID,
    },
    "finance_companies_create": {"name": "Empresa fora da vista", "cnpj": "11.222.333/0001-81"},
    "finance_accounts_get": {"id": DEMO_ACCOUNT_ID},
    "finance_receivables_list": {"limit": 1},
    "finance_payables_list": {"limit": 1},
    "finance_payables_create": {
        "company_id": DEMO_COMPANY_ID, "description": "Conta pelo executor errado", "amount": "10.00",
        "due_date": "2026-12-28", "person_name": "Fornecedor do teste",
        "idempotency_key": str(uuid.uuid4()),
    },
}


# finance_payables_list with filters, sort and a projection: the demo's pending payables
# due in December, "Aluguel de dezembro" among them.
PAYABLES_DECEMBER = {
    "filters": {"status": {"in": ["pending"]}, "due_date": {"gte": "2026-12-01", "lte": "2026-12-31"}},
    "sort": "due_date",
    "limit": 10,
    "fields": ["id", "status", "due_date", "amount"],
}


def payables_december_check(page: Any) -> tuple[str, bool, str]:
    rows = page.get("data") if isinstance(page, dict) else None
    ok = (
        bool(rows)
        and all(r.get("status") == "pending" and "2026-12-01" <= r.get("due_date", "") <= "2026-12-31" for r in rows)
        and all(set(r) == {"id", "status", "due_date", "amount"} for r in rows)
        and [r["due_date"] for r in rows] == sorted(r["due_date"] for r in rows)
        and any(r["id"] == DEMO_PENDING_PAYABLE_ID for r in rows)
    )
    return "finance_payables_list filters: pending, due in December, projected", ok, f"got {json.dumps(page)[:400]}"


def account_check(account: Any) -> tuple[str, bool, str]:
    ok = isinstance(account, dict) and account.get("id") == DEMO_ACCOUNT_ID and isinstance(account.get("balance"), str)
    return "finance_accounts_get answers the account and its balance", ok, f"got {json.dumps(account)[:300]}"
