//! `completion/complete` (SPEC §9): suggestions for a prompt argument or a record
//! template's `{id}`, at most 100, with `hasMore`.
//!
//! * `workspace_id`: the caller's workspaces whose name (or id) starts with the value.
//! * `company_id`: live companies by name or trade name prefix, in the workspace named by
//!   `context.arguments.workspace_id` when given, else in the caller's readable ones.
//! * `month`: the last 24 months up to the current one, newest first.
//! * `days_ahead`: a few usual horizons.
//! * a template's `{id}`: record ids by label prefix (description, name, file name).
//!
//! Suggestions come only from what the caller may read: another tenant's records are
//! never offered.

use serde_json::{json, Map, Value};

use super::prompts::{self, ArgumentKind};
use super::resources::{self, TEMPLATES};
use super::{unavailable, McpContext};
use crate::protocol::rpc::RpcError;

/// At most this many values per answer (MCP).
const MAX_VALUES: usize = 100;

/// The usual look-ahead horizons, in days.
const DAYS_AHEAD: &[&str] = &["0", "7", "15", "30", "60", "90", "180", "365"];

/// How many months back `month` suggests (the current one included).
const MONTHS_BACK: i64 = 24;

struct Completion {
    values: Vec<String>,
    has_more: bool,
    /// Known when every match was counted.
    total: Option<usize>,
}

impl Completion {
    /// Every match, cut to [`MAX_VALUES`].
    fn all(mut values: Vec<String>) -> Completion {
        let total = values.len();
        values.truncate(MAX_VALUES);
        Completion { has_more: total > values.len(), values, total: Some(total) }
    }

    fn into_result(self) -> Map<String, Value> {
        let mut completion = json!({ "values": self.values, "hasMore": self.has_more });
        if let Some(total) = self.total {
            completion["total"] = json!(total);
        }
        let mut result = Map::new();
        result.insert("completion".into(), completion);
        result
    }
}

pub async fn complete(ctx: &McpContext<'_>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let reference = params
        .get("ref")
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::invalid_params("params.ref must be an object"))?;
    let argument = params.get("argument").and_then(Value::as_object);
    let (Some(name), Some(value)) = (
        argument.and_then(|a| a.get("name")).and_then(Value::as_str),
        argument.and_then(|a| a.get("value")).and_then(Value::as_str),
    ) else {
        return Err(RpcError::invalid_params("params.argument must be {name, value} with string values"));
    };
    let context = params.get("context").and_then(|c| c.get("arguments")).and_then(Value::as_object);
    let completion = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let prompt_name = reference.get("name").and_then(Value::as_str).unwrap_or("");
            let prompt = prompts::usable(ctx, prompt_name).await?;
            let argument = prompt
                .arguments
                .iter()
                .find(|a| a.name == name)
                .ok_or_else(|| RpcError::invalid_params(format!("Prompt {prompt_name} has no argument {name}")))?;
            let workspace =
                context.and_then(|c| c.get("workspace_id")).and_then(Value::as_str).filter(|w| !w.is_empty());
            prompt_argument(ctx, argument.kind, value, workspace).await?
        }
        Some("ref/resource") => {
            let uri = reference.get("uri").and_then(Value::as_str).unwrap_or("");
            let template = TEMPLATES
                .iter()
                .find(|t| uri == resources::uri_template(t) && ctx.view.offers_resource(t.scope))
                .ok_or_else(|| RpcError::invalid_params(format!("Unknown resource template: {uri}")))?;
            if name != "id" {
                return Err(RpcError::invalid_params("This template's only variable is id"));
            }
            let (values, has_more) =
                resources::complete_id(ctx, template, value, None).await.map_err(|e| unavailable(&e))?;
            Completion { values, has_more, total: None }
        }
        _ => return Err(RpcError::invalid_params("params.ref.type must be ref/prompt or ref/resource")),
    };
    Ok(completion.into_result())
}

async fn prompt_argument(
    ctx: &McpContext<'_>,
    kind: ArgumentKind,
    value: &str,
    workspace: Option<&str>,
) -> Result<Completion, RpcError> {
    Ok(match kind {
        ArgumentKind::Workspace => {
            let memberships = ctx.memberships().await.map_err(|e| unavailable(&e))?;
            let prefix = value.to_lowercase();
            Completion::all(
                memberships
                    .iter()
                    .filter(|m| {
                        m.workspace_name.to_lowercase().starts_with(&prefix) || m.workspace_id.starts_with(&prefix)
                    })
                    .map(|m| m.workspace_id.clone())
                    .collect(),
            )
        }
        ArgumentKind::Company => {
            let companies = TEMPLATES.iter().find(|t| t.resource == "companies").ok_or_else(RpcError::internal)?;
            let (values, has_more) =
                resources::complete_id(ctx, companies, value, workspace).await.map_err(|e| unavailable(&e))?;
            Completion { values, has_more, total: None }
        }
        ArgumentKind::Month => Completion::all(recent_months().into_iter().filter(|m| m.starts_with(value)).collect()),
        ArgumentKind::DaysAhead => {
            Completion::all(DAYS_AHEAD.iter().filter(|d| d.starts_with(value)).map(|d| d.to_string()).collect())
        }
    })
}

/// The current month and the ones before it, newest first, as `YYYY-MM`.
fn recent_months() -> Vec<String> {
    let first = format!("{}-01", &prompts::today()[..7]);
    (0..MONTHS_BACK)
        .filter_map(|back| crate::domain::dates::add_months(&first, -back))
        .map(|d| d[..7].to_string())
        .collect()
}
