"""What the clients of tests/clients/ expect, view by view (SPEC §5.1, §5.4), and the
PASS/FAIL reporting they share.

Shared by python_client.py, fastmcp_client.py and inspector_client.py (node_client.mjs
carries the same facts in JavaScript). Stdlib only, so each client imports it from its
own folder.

The facts, all from the contract:
  * the catalogue: `finance_<resource>_<action>`, the resources in the money-flow order
    of SPEC §5 (workspaces first, then reports, cash flow, payables, receivables, reconciliations, transactions, transfers,
    accounts, receipts, attachments, companies, people, categories, cost centers, taxes, automatic rules);
  * read tools: list, get, aggregates, download, the reports (`readOnlyHint: true`); every other
    action writes;
  * a view (`/mcp/x/{toolsets}`, `/mcp/readonly`, `/mcp/x/{toolsets}/readonly`, or the
    `X-MCP-Toolsets` / `X-MCP-Readonly` headers; path and header narrow to what both
    allow) lists finance_workspaces_list plus the tools of its toolsets, only the read
    ones when read-only;
  * on the default list, Cursor's 40-tool cut keeps every payables and receivables tool.
The demo owner's token grants every scope and the owner role, so for it the expected
list is exactly the view's part of the catalogue.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
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
CATALOGUE: dict[str, tuple[str, ...]] = {
    "workspaces": ("list",),
    "reports": ("aging", "income_statement"),
    "cash_flow": ("get",),
    "payables": (
        "list",
        "get",
        "create",
        "update",
        "delete",
        "aggregates",
        "settle",
        "cancel",
        "reopen",
        "send_to_bank",
        "cancel_dispatch",
    ),
    "receivables": (
        "list",
        "get",
        "create",
        "update",
        "delete",
        "aggregates",
        "settle",
        "cancel",
        "reopen",
        "charge",
        "cancel_charge",
    ),
    "reconciliations": ("create", "get", "delete", "suggest"),
    "transactions": ("list", "get", "create", "update", "delete", "aggregates"),
    "transfers": ("get", "create"),
    "accounts": ("list", "get", "create", "update", "delete", "adjust_balance", "import_statement"),
    "receipts": ("list", "get"),
    "attachments": ("list", "get", "upload", "download", "link", "unlink", "delete"),
    "companies": ("list", "get", "create", "update", "delete"),
    "people": ("list", "get", "create", "update", "delete"),
    "categories": ("list", "get", "create", "update", "delete"),
    "cost_centers": ("list", "get", "create", "update", "delete"),
    "taxes": ("list", "get", "create", "update", "delete"),
    "automatic_rules": ("list", "get", "create", "update", "delete", "reorder"),
}
TOOLSETS = tuple(r for r in CATALOGUE if r != "workspaces")
READ_ACTIONS = frozenset({"list", "get", "aggregates", "download", "suggest", "aging", "income_statement"})
WORKSPACES_TOOL = "finance_workspaces_list"
CURSOR_LIMIT = 40


def tool_name(resource: str, action: str) -> str:
    return f"finance_{resource}_{action}"


def resource_of(name: str) -> str | None:
    """The catalogue resource of a tool name (longest match: cost_centers before …)."""
    for resource in sorted(CATALOGUE, key=len, reverse=True):
        if name.startswith(f"finance_{resource}_") and name[len(f"finance_{resource}_") :] in CATALOGUE[resource]:
            return resource
    return None


def is_read(name: str) -> bool:
    resource = resource_of(name)
    return resource is not None and name[len(f"finance_{resource}_") :] in READ_ACTIONS


@dataclass(frozen=True)
class View:
    """Which part of the catalogue a URL (and its view headers) shows."""

    toolsets: frozenset[str] | None  # None: every toolset
    readonly: bool

    @property
    def label(self) -> str:
        parts = ["all" if self.toolsets is None else ",".join(t for t in TOOLSETS if t in self.toolsets)]
        if self.readonly:
            parts.append("readonly")
        return "/".join(parts)

    def shows(self, name: str) -> bool:
        resource = resource_of(name)
        if resource is None:
            return False
        if resource != "workspaces" and self.toolsets is not None and resource not in self.toolsets:
            return False
        return not self.readonly or is_read(name)

    def expected_names(self) -> list[str]:
        """The tools this view lists for the demo owner, in the contract's order."""
        return [tool_name(r, a) for r, actions in CATALOGUE.items() for a in actions if self.shows(tool_name(r, a))]

    @property
    def narrowed(self) -> bool:
        return self.toolsets is not None or self.readonly


def view_of(url: str, headers: dict[str, str] | None = None) -> View:
    """The view that `url`'s path and the X-MCP-* headers ask for (SPEC §5.4)."""
    path = unquote(urlsplit(url).path).rstrip("/")
    toolsets: frozenset[str] | None = None
    readonly = False
    if path.startswith("/mcp/x/"):
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
    return View(toolsets, readonly)


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
        writing = [
            n for t, n in zip(tools, names)
            if annotation(t, "readOnlyHint") is not True or annotation(t, "destructiveHint") is True
        ]
        checks.append(
            (f"tools/list [{view.label}] has no write or destructive tool", not writing,
             f"not readOnlyHint, or destructiveHint: {writing[:8]}")
        )
    return checks


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
