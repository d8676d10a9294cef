//! Resources (SPEC §9): fixed documents (`kobana://finance/workspaces`,
//! `kobana://finance/guide`) and URI templates. A URI that names nothing the caller can
//! read is "not found": -32602 with `data.uri` in 2026, -32002 in 2025.

use http::StatusCode;
use serde_json::{json, Map, Value};

use crate::storage::Conn;

use super::catalogue::attachments::Attachments;
use super::tools::BoxFuture;
use super::{no_cursor, unavailable, McpContext};
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::ops::accounts::Accounts;
use crate::ops::bills::declared::{Payables, Receivables};
use crate::ops::categories::Categories;
use crate::ops::companies::Companies;
use crate::ops::cost_centers::CostCenters;
use crate::ops::machinery::list::ListSpec;
use crate::ops::machinery::resource::Records;
use crate::ops::people::People;
use crate::ops::taxes::Taxes;
use crate::ops::transactions::declared::Transactions;
use crate::ops::OpContext;
use crate::protocol::rpc::{RpcError, RESOURCE_NOT_FOUND_2025};
use crate::storage::identity::Membership;

/// Reads one record through its `get` operation.
pub type ReadRecord =
    for<'a> fn(&'a OpContext<'a>, &'a mut Conn, &'a Membership, &'a str) -> BoxFuture<'a, Result<Value, ApiError>>;

/// A URI template `kobana://finance/{resource}/{id}` over a resource's get operation.
pub struct Template {
    pub resource: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub scope: Resource,
    pub read: ReadRecord,
    /// The resource's list: its table and which rows are live (e.g. one kind of billing,
    /// not soft-deleted), for completing `{id}`.
    pub list: &'static ListSpec,
    /// The columns `{id}` completes by (a prefix of any of them); the first orders the
    /// suggestions.
    pub labels: &'static [&'static str],
}

impl Template {
    /// The template of the resource `R`: its scope, its get operation and its list come
    /// from the resource; `labels` are the columns `{id}` completes by.
    pub const fn of<R: Records>(
        resource: &'static str,
        title: &'static str,
        description: &'static str,
        labels: &'static [&'static str],
    ) -> Template {
        Template { resource, title, description, scope: R::RESOURCE, read: get::<R>, list: R::LIST, labels }
    }
}

fn to_json<T: serde::Serialize>(record: &T) -> Result<Value, ApiError> {
    serde_json::to_value(record).map_err(|_| ApiError::internal())
}

/// The [`ReadRecord`] of a resource: its get operation (the one the get tool runs),
/// serialised — the JSON the get tool and `GET /v1/...{id}` return.
fn get<'a, R: Records>(
    ctx: &'a OpContext<'a>,
    conn: &'a mut Conn,
    ws: &'a Membership,
    id: &'a str,
) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move { to_json(&R::get(ctx, conn, ws, id).await?) })
}

/// The record templates, one per resource with a get operation, in the order of the
/// tool catalogue (SPEC §5: the money flow first).
pub static TEMPLATES: &[Template] = &[
    Template::of::<Payables>(
        "payables",
        "Payable",
        "A payable (conta a pagar) by id: the same JSON as finance_payables_get.",
        &["description"],
    ),
    Template::of::<Receivables>(
        "receivables",
        "Receivable",
        "A receivable (conta a receber) by id: the same JSON as finance_receivables_get.",
        &["description"],
    ),
    Template::of::<Transactions>(
        "transactions",
        "Transaction",
        "A transaction of the ledger by id: the same JSON as finance_transactions_get.",
        &["description"],
    ),
    Template::of::<Accounts>(
        "accounts",
        "Financial account",
        "A financial account by id, with its balance: the same JSON as finance_accounts_get.",
        &["name"],
    ),
    Template::of::<Attachments>(
        "attachments",
        "Attachment",
        "An attachment's metadata and links by id (no bytes): the same JSON as finance_attachments_get.",
        &["file_name", "title"],
    ),
    Template::of::<Companies>(
        "companies",
        "Company",
        "A company by id: the same JSON as finance_companies_get.",
        &["name", "trade_name"],
    ),
    Template::of::<People>(
        "people",
        "Person",
        "A vendor or customer by id: the same JSON as finance_people_get.",
        &["name", "legal_name", "nickname"],
    ),
    Template::of::<Categories>(
        "categories",
        "Category",
        "A category of the chart of accounts by id: the same JSON as finance_categories_get.",
        &["name"],
    ),
    Template::of::<CostCenters>(
        "cost_centers",
        "Cost center",
        "A cost/revenue (classification) center by id: the same JSON as finance_cost_centers_get.",
        &["name"],
    ),
    Template::of::<Taxes>("taxes", "Tax", "A withholding tax by id: the same JSON as finance_taxes_get.", &["name"]),
];

const PREFIX: &str = "kobana://finance/";

/// The template and id a record URI names, if any.
pub fn template_of(uri: &str) -> Option<(&'static Template, &str)> {
    let rest = uri.strip_prefix(PREFIX)?;
    let (resource, id) = rest.split_once('/')?;
    let template = TEMPLATES.iter().find(|t| t.resource == resource)?;
    (!id.is_empty() && !id.contains('/')).then_some((template, id))
}

pub const WORKSPACES_URI: &str = "kobana://finance/workspaces";
pub const GUIDE_URI: &str = "kobana://finance/guide";
const GUIDE: &str = include_str!("guide.md");

pub fn list(params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    no_cursor(params)?;
    let mut result = Map::new();
    result.insert(
        "resources".into(),
        json!([
            {
                "uri": WORKSPACES_URI,
                "name": "workspaces",
                "title": "Your workspaces",
                "description": "The workspaces you can act in, your role and permissions in each (JSON).",
                "mimeType": "application/json",
            },
            {
                "uri": GUIDE_URI,
                "name": "guide",
                "title": "How to use Kobana Finance",
                "description": "Money format, filters, pagination, errors and confirmation of destructive actions (Markdown).",
                "mimeType": "text/markdown",
                "size": GUIDE.len(),
            },
        ]),
    );
    Ok(result)
}

/// The record templates whose resource the caller may read (scope and role, as for the
/// get tools).
pub async fn templates(ctx: &McpContext<'_>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    no_cursor(params)?;
    let mut list = Vec::new();
    for t in TEMPLATES {
        if ctx.view.offers_resource(t.scope) && ctx.may(t.scope, Access::Read).await.map_err(|e| unavailable(&e))? {
            list.push(json!({
                "uriTemplate": uri_template(t),
                "name": t.resource,
                "title": t.title,
                "description": t.description,
                "mimeType": "application/json",
            }));
        }
    }
    let mut result = Map::new();
    result.insert("resourceTemplates".into(), Value::Array(list));
    Ok(result)
}

pub fn uri_template(template: &Template) -> String {
    format!("{PREFIX}{}/{{id}}", template.resource)
}

fn not_found(ctx: &McpContext<'_>, uri: &str) -> RpcError {
    if ctx.era.is_modern() {
        RpcError::invalid_params("Resource not found").with_data(json!({ "uri": uri }))
    } else {
        RpcError::new(StatusCode::OK, RESOURCE_NOT_FOUND_2025, "Resource not found").with_data(json!({ "uri": uri }))
    }
}

pub async fn read(ctx: &McpContext<'_>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("params.uri must be a string"))?;
    let (mime, text) = match uri {
        WORKSPACES_URI => {
            let op = ctx.op_context().await.map_err(|e| unavailable(&e))?;
            let list = crate::ops::workspaces::list(&op).map_err(|e| unavailable(&e))?;
            ("application/json", serde_json::to_string(&list).map_err(|_| RpcError::internal())?)
        }
        GUIDE_URI => ("text/markdown", GUIDE.to_string()),
        _ => {
            let Some((template, id)) = template_of(uri).filter(|(t, _)| ctx.view.offers_resource(t.scope)) else {
                return Err(not_found(ctx, uri));
            };
            match read_record(ctx, template, id).await {
                Ok(Some(record)) => ("application/json", record.to_string()),
                Ok(None) => return Err(not_found(ctx, uri)),
                Err(e) => return Err(unavailable(&e)),
            }
        }
    };
    let mut result = Map::new();
    result.insert("contents".into(), json!([{ "uri": uri, "mimeType": mime, "text": text }]));
    Ok(result)
}

/// Reads a record in whichever of the caller's workspaces holds it (the default
/// workspace only, when one is set). Anything the caller may not read — another
/// tenant's record, a missing scope or role — is `None`, indistinguishable from missing.
async fn read_record(ctx: &McpContext<'_>, template: &Template, id: &str) -> Result<Option<Value>, ApiError> {
    let workspaces = ctx.workspaces_allowing(template.scope, Access::Read, None).await?;
    if workspaces.is_empty() {
        return Ok(None);
    }
    let op = ctx.op_context().await?;
    let mut conn = ctx.connection().await?;
    for ws in workspaces {
        match (template.read)(&op, &mut conn, ws, id).await {
            Ok(record) => return Ok(Some(record)),
            Err(e) if e.code == ErrorCode::ServiceUnavailable || e.code == ErrorCode::InternalError => return Err(e),
            Err(_) => continue,
        }
    }
    Ok(None)
}

/// Completes the `{id}` of a record template: ids of the caller's live records whose
/// label (any of the template's label columns, case-insensitively) or id starts with
/// `prefix`, at most 100, and whether there are more. Only workspaces where the caller
/// may read the resource count: `workspace` when given, else the connection's default
/// workspace when set, else all of the caller's.
pub async fn complete_id(
    ctx: &McpContext<'_>,
    template: &Template,
    prefix: &str,
    workspace: Option<&str>,
) -> Result<(Vec<String>, bool), ApiError> {
    let workspaces = ctx.workspaces_allowing(template.scope, Access::Read, workspace).await?;
    crate::ops::machinery::complete::ids_starting_with(
        &ctx.state.db,
        template.list,
        template.labels,
        prefix,
        &workspaces,
    )
    .await
}
