//! `GET /v1/workspaces` and `finance_workspaces_list`: the caller's workspaces and,
//! for each, what the caller may do there (token scopes ∩ role).

use serde::Serialize;
use serde_json::{Map, Value};

use super::OpContext;
use crate::domain::roles::{permission, Access, Resource};
use crate::error::ApiError;

#[derive(Debug, Serialize)]
pub struct Permissions {
    pub read: bool,
    pub write: bool,
    pub delete: bool,
}

#[derive(Debug, Serialize)]
pub struct WorkspaceView {
    pub id: String,
    pub name: String,
    pub role: &'static str,
    /// Per resource (`payables`, `accounts`, …): what this caller may do here.
    pub permissions: Map<String, Value>,
}

#[derive(Debug, Serialize)]
pub struct ListMeta {
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct WorkspaceList {
    pub data: Vec<WorkspaceView>,
    pub meta: ListMeta,
}

/// Lists the caller's workspaces. Needs no scope: any valid token may ask where it
/// can act.
pub fn list(ctx: &OpContext<'_>) -> Result<WorkspaceList, ApiError> {
    let data = ctx
        .memberships
        .iter()
        .map(|m| {
            let permissions = Resource::ALL
                .iter()
                .map(|&r| {
                    let may = |a| permission(&ctx.identity.scopes, Some(m.role), r, a).is_ok();
                    let p =
                        Permissions { read: may(Access::Read), write: may(Access::Write), delete: may(Access::Delete) };
                    (r.as_str().to_string(), serde_json::to_value(p).unwrap_or(Value::Null))
                })
                .collect();
            WorkspaceView {
                id: m.workspace_id.clone(),
                name: m.workspace_name.clone(),
                role: m.role.as_str(),
                permissions,
            }
        })
        .collect();
    Ok(WorkspaceList { data, meta: ListMeta { next_cursor: None } })
}
