//! Find mode (SPEC §5.5): a small, fixed catalogue that reaches every tool of the view,
//! for clients that take only a server's first tools (Cursor: 40) or models that choose
//! badly among many. `/mcp/find`, `/mcp/find/readonly`, or `X-MCP-Find: true` on any
//! view. Its `tools/list` holds `finance_workspaces_list`, `finance_tools_search` and
//! the runners `finance_tools_run_read`, `_write` and `_destructive`.
//!
//! A runner runs a catalogue tool exactly as `tools/call` would ([`tools::run`]): the
//! same argument check, scope, role and workspace, idempotency, confirmation (the
//! `requestState` binds the tool run, not the runner) and result. Its annotations are
//! those of the class it runs, so a client's own approval prompts keep working, and it
//! refuses a tool of another class. The write budget is spent by the write runners.
//!
//! A runner is listed when the caller may run at least one tool of its class in the
//! view, and callable whenever the view offers its class: as a catalogue tool the
//! caller's token does not reach is not listed but answers its scope refusal when
//! called, a runner does too. A tool the view hides is unknown to the runners, answered
//! as a name that does not exist.

mod search;

use bytes::Bytes;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::catalogue::{CREATE, DESTRUCTIVE, READ};
use super::listing;
use super::schema::{self, Side};
use super::tools::{self, outcome_result, tool_result, Annotations, ToolAnswer, ToolSpec};
use super::view::Toolset;
use super::{unavailable, McpContext};
use crate::error::ApiError;
use crate::kept::Kept;
use crate::ops::machinery::validate::schema_of;
use crate::protocol::rpc::RpcError;

pub const SEARCH: &str = "finance_tools_search";

/// The classes of tools a runner runs, by their annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Read,
    Write,
    Destructive,
}

impl Class {
    const ALL: [Class; 3] = [Class::Read, Class::Write, Class::Destructive];

    fn of(tool: &ToolSpec) -> Class {
        match (tool.annotations.read_only, tool.annotations.destructive) {
            (true, _) => Class::Read,
            (false, false) => Class::Write,
            (false, true) => Class::Destructive,
        }
    }

    fn runner(self) -> &'static str {
        match self {
            Class::Read => "finance_tools_run_read",
            Class::Write => "finance_tools_run_write",
            Class::Destructive => "finance_tools_run_destructive",
        }
    }

    fn of_runner(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.runner() == name)
    }

    fn title(self) -> &'static str {
        match self {
            Class::Read => "Run a read tool",
            Class::Write => "Run a write tool",
            Class::Destructive => "Run a destructive tool",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Class::Read => {
                "Runs a read-only tool found by finance_tools_search, with the arguments its inputSchema takes; \
answers what the tool answers."
            }
            Class::Write => {
                "Runs a tool found by finance_tools_search that creates or changes records (not destructive)."
            }
            Class::Destructive => {
                "Runs a tool found by finance_tools_search that deletes, cancels, settles, reopens or moves money. The \
user confirms first."
            }
        }
    }

    /// The annotations of the tools it runs (a create's: a write that is not
    /// idempotent by itself).
    fn annotations(self) -> Annotations {
        match self {
            Class::Read => READ,
            Class::Write => CREATE,
            Class::Destructive => DESTRUCTIVE,
        }
    }

    /// Whether `view` offers tools of this class (a read-only view: reads only).
    fn in_view(self, ctx: &McpContext<'_>) -> bool {
        self == Class::Read || tools::catalogue().any(|t| Class::of(t) == self && t.in_view(&ctx.view))
    }
}

/// Whether a call of `name` in find mode spends the write budget: the write runners.
pub fn runs_writes(name: &str) -> bool {
    Class::of_runner(name).is_some_and(|c| c != Class::Read)
}

/// `finance_tools_search`'s arguments. Each is optional; the schema shows its type
/// alone (no `null`), as few bytes as a model reads.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchRequest {
    /// What to do, in free words.
    #[serde(default)]
    #[schemars(with = "String", length(max = 200))]
    query: Option<String>,
    /// Only this toolset's tools.
    #[serde(default)]
    #[schemars(with = "Toolset")]
    toolset: Option<Toolset>,
    /// Exact tool names.
    #[serde(default)]
    #[schemars(with = "Vec<String>", length(max = 100))]
    names: Option<Vec<String>>,
    /// summary (default), or full: as tools/list has it.
    #[serde(default)]
    #[schemars(with = "Detail")]
    detail: Option<Detail>,
    /// Default 8.
    #[serde(default)]
    #[schemars(with = "u8", range(min = 1, max = 20))]
    limit: Option<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Detail {
    Summary,
    Full,
}

/// A runner's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RunRequest {
    /// The tool's name.
    tool: String,
    /// Its arguments.
    #[serde(default)]
    #[schemars(with = "Map<String, Value>")]
    arguments: Option<Map<String, Value>>,
}

const SEARCH_TITLE: &str = "Find finance tools";
const SEARCH_DESCRIPTION: &str = "Finds this server's finance tools for a task: payables, receivables, bank, \
ledger, reports, registers. query in Portuguese, Spanish or English (\"contas a pagar vencidas\", \"dar baixa\", \
\"overdue receivables\"). Answers each tool's name, title, first sentence and the runner that runs it with {tool, \
arguments}; detail full: the tool as tools/list has it. Call it first.";

fn search_input() -> Value {
    schema::compact(schema_of::<SearchRequest>(), Side::Input)
}

fn run_input() -> Value {
    schema::compact(schema_of::<RunRequest>(), Side::Input)
}

/// A meta tool as `tools/list` shows it (keys in the catalogue's order; 2025-03-26:
/// no `title`).
fn meta_tool(name: &str, title: &str, description: &str, annotations: Annotations, input: Value, full: bool) -> Value {
    let mut tool = json!({
        "annotations": annotations.json(title),
        "description": description,
        "inputSchema": input,
        "name": name,
    });
    if full {
        tool["title"] = json!(title);
    }
    tool
}

/// Find mode's `tools/list`: the workspaces tool, the search and the runners the caller
/// may use. Kept serialised per set shown and era form.
pub async fn list(ctx: &McpContext<'_>) -> Result<Bytes, RpcError> {
    let full = !ctx.era.is_2025_03_26();
    let mut shown = 0u8;
    for (at, class) in Class::ALL.into_iter().enumerate() {
        // The workspaces tool is listed as itself: it does not make a runner useful.
        for tool in tools::catalogue().skip(1).filter(|t| Class::of(t) == class && t.in_view(&ctx.view)) {
            if tools::visible(ctx, tool).await.map_err(|e| unavailable(&e))? {
                shown |= 1 << at;
                break;
            }
        }
    }
    static LISTS: Kept<(u8, bool), Bytes> = Kept::new(16);
    Ok(LISTS.get((shown, full), || {
        let mut out = String::from("[");
        listing::all()[0].write(&mut out, full);
        let search = meta_tool(SEARCH, SEARCH_TITLE, SEARCH_DESCRIPTION, READ, search_input(), full);
        let mut shown_tools = vec![search];
        for (at, class) in Class::ALL.into_iter().enumerate() {
            if shown & (1 << at) != 0 {
                let runner = meta_tool(
                    class.runner(),
                    class.title(),
                    class.description(),
                    class.annotations(),
                    run_input(),
                    full,
                );
                shown_tools.push(runner);
            }
        }
        for tool in shown_tools {
            out.push(',');
            out.push_str(&tool.to_string());
        }
        out.push(']');
        Bytes::from(out)
    }))
}

/// Find mode's `tools/call`.
pub async fn call(
    ctx: &McpContext<'_>,
    name: &str,
    arguments: &Map<String, Value>,
    params: &Map<String, Value>,
) -> Result<ToolAnswer, RpcError> {
    if name == SEARCH {
        return Ok(ToolAnswer::Members(search(ctx, arguments).await?));
    }
    if let Some(class) = Class::of_runner(name).filter(|c| c.in_view(ctx)) {
        return run(ctx, class, arguments, params).await;
    }
    // The workspaces tool is listed as itself; every other tool is reached by a runner.
    match tools::catalogue().next().filter(|first| first.name == name) {
        Some(workspaces) => tools::run(ctx, workspaces, arguments, params).await,
        None => Err(tools::unknown_tool(name)),
    }
}

async fn run(
    ctx: &McpContext<'_>,
    class: Class,
    arguments: &Map<String, Value>,
    params: &Map<String, Value>,
) -> Result<ToolAnswer, RpcError> {
    let request = match crate::ops::machinery::validate::parse::<RunRequest>(Value::Object(arguments.clone())) {
        Ok(request) => request,
        Err(e) => return outcome_result(Err(e)).map(ToolAnswer::Members),
    };
    let Some(tool) = tools::find_in(&request.tool, &ctx.view) else {
        let error = ApiError::bad_request(format!(
            "No tool {} here: finance_tools_search finds the tools you can run",
            truncated(&request.tool)
        ))
        .with_details(json!({ "field": "tool", "reason": "unknown_tool" }));
        return Ok(ToolAnswer::Members(tool_result(&error.envelope(), true)));
    };
    let of = Class::of(tool);
    if of != class {
        let error = ApiError::bad_request(format!("{} is run by {}", tool.name, of.runner()))
            .with_details(json!({ "field": "tool", "reason": "wrong_runner", "runner": of.runner() }));
        return Ok(ToolAnswer::Members(tool_result(&error.envelope(), true)));
    }
    tools::run(ctx, tool, &request.arguments.unwrap_or_default(), params).await
}

/// A name as a message may quote it: short, printable.
fn truncated(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).take(60).collect()
}

/// `finance_tools_search`: the tools of the view the caller may run, ranked for the
/// query, in the detail asked for.
async fn search(ctx: &McpContext<'_>, arguments: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let request = match crate::ops::machinery::validate::parse::<SearchRequest>(Value::Object(arguments.clone())) {
        Ok(request) => request,
        Err(e) => return outcome_result(Err(e)),
    };
    let toolset = request.toolset;
    let mut candidates: Vec<(usize, &'static ToolSpec)> = Vec::new();
    for (at, tool) in tools::catalogue().enumerate() {
        let named = request.names.as_ref().is_none_or(|names| names.iter().any(|n| n == tool.name));
        let in_toolset = toolset.is_none_or(|t| Toolset::of_tool(tool.name) == Some(t));
        if named
            && in_toolset
            && tool.in_view(&ctx.view)
            && tools::visible(ctx, tool).await.map_err(|e| unavailable(&e))?
        {
            candidates.push((at, tool));
        }
    }
    let limit = usize::from(request.limit.unwrap_or(8));
    let ranked = match request.query.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
        Some(query) => search::rank(query, &candidates.iter().map(|(at, _)| *at).collect::<Vec<_>>()),
        None => candidates.iter().map(|(at, _)| *at).collect(),
    };
    let full = request.detail == Some(Detail::Full);
    let era_form = !ctx.era.is_2025_03_26();
    let listed = listing::all();
    let found: Vec<Value> = ranked
        .into_iter()
        .take(limit)
        .filter_map(|at| {
            let tool = tools::catalogue().nth(at)?;
            let runner = json!(Class::of(tool).runner());
            if full {
                // The tool exactly as this era's `tools/list` has it, and its runner.
                let mut text = String::new();
                listed.get(at)?.write(&mut text, era_form);
                let mut entry = serde_json::from_str::<Value>(&text).ok()?;
                entry.as_object_mut()?.insert("runner".into(), runner);
                return Some(entry);
            }
            Some(json!({
                "name": tool.name,
                "title": tool.title,
                "description": search::summary(tool.description),
                "runner": runner,
            }))
        })
        .collect();
    Ok(tool_result(&json!({ "tools": found }), false))
}
