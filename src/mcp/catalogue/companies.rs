//! `finance_companies_*`: the `/v1/companies` operations as tools.

use serde_json::{json, Value};
use sqlx::AnyConnection;

use super::{get_schema, id_schema, list_request, list_schema, project, project_page, split, workspace, write_schema};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::mcp::tools::{Annotations, BoxFuture, ToolCall, ToolSpec};
use crate::ops::companies::{self, Company, CompanyCreate, CompanyUpdate, LIST};
use crate::ops::openapi::page_of;
use crate::ops::validate::{parse, schema_of};
use crate::ops::idempotency;

const READ: Annotations = Annotations { read_only: true, destructive: false, idempotent: true };

pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "finance_companies_list",
        title: "List companies",
        description: "Lists the companies (CNPJ legal entities) of a workspace. Filters: active, name, cnpj, type \
(matriz|filial), created_at; sort name or created_at. Every other finance record belongs to a company: use its id as company_id.",
        permission: Some((Resource::Companies, Access::Read)),
        annotations: READ,
        input_schema: || list_schema(&LIST),
        output_schema: Some(|| page_of(schema_of::<Company>())),
        handler: list,
        describe: None,
    },
    ToolSpec {
        name: "finance_companies_get",
        title: "Get a company",
        description: "Gets one company by id, with its tax regime, address and closed period (locked_until).",
        permission: Some((Resource::Companies, Access::Read)),
        annotations: READ,
        input_schema: get_schema,
        output_schema: Some(schema_of::<Company>),
        handler: get,
        describe: None,
    },
    ToolSpec {
        name: "finance_companies_create",
        title: "Create a company",
        description: "Creates a company from its legal name and CNPJ (check digits are validated; one active company per \
CNPJ). Optional: trade_name, municipal_registration, tax_regime, address, locked_until (YYYY-MM-DD: records dated on or \
before it can no longer change). Pass an idempotency_key to make a retry safe.",
        permission: Some((Resource::Companies, Access::Write)),
        annotations: Annotations { read_only: false, destructive: false, idempotent: false },
        input_schema: || write_schema(schema_of::<CompanyCreate>(), false, true),
        output_schema: Some(schema_of::<Company>),
        handler: create,
        describe: None,
    },
    ToolSpec {
        name: "finance_companies_update",
        title: "Update a company",
        description: "Changes the fields sent (name, active, trade_name, municipal_registration, tax_regime, address, \
locked_until); null clears an optional field. The CNPJ cannot change.",
        permission: Some((Resource::Companies, Access::Write)),
        annotations: Annotations { read_only: false, destructive: false, idempotent: true },
        input_schema: || write_schema(schema_of::<CompanyUpdate>(), true, false),
        output_schema: Some(schema_of::<Company>),
        handler: update,
        describe: None,
    },
    ToolSpec {
        name: "finance_companies_delete",
        title: "Delete a company",
        description: "Deletes a company that no account, transaction, bill or person uses (otherwise the error lists \
what uses it). Destructive: the server asks the user to confirm before anything changes.",
        permission: Some((Resource::Companies, Access::Delete)),
        annotations: Annotations { read_only: false, destructive: true, idempotent: false },
        input_schema: id_schema,
        output_schema: None,
        handler: delete,
        describe: Some(describe_delete),
    },
];

fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(|_| ApiError::internal())
}

fn list<'a>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let ctx = call.ctx.op_context().await?;
        let args = split(&call.arguments);
        let ws = workspace(&ctx, &args, call.ctx.default_workspace.as_deref())?;
        let page = companies::list(&ctx, conn, ws, &list_request(&call.arguments)?).await?;
        Ok(project_page(to_value(&page)?, args.fields.as_deref()))
    })
}

fn get<'a>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let ctx = call.ctx.op_context().await?;
        let args = split(&call.arguments);
        let ws = workspace(&ctx, &args, call.ctx.default_workspace.as_deref())?;
        let company = companies::get(&ctx, conn, ws, args.id.as_deref().unwrap_or_default()).await?;
        Ok(project(to_value(&company)?, args.fields.as_deref()))
    })
}

fn create<'a>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let ctx = call.ctx.op_context().await?;
        let args = split(&call.arguments);
        let ws = workspace(&ctx, &args, call.ctx.default_workspace.as_deref())?;
        let input: CompanyCreate = parse(Value::Object(args.body.clone()))?;
        // The same key space as X-Idempotency-Key on POST /v1/companies.
        if let Some(key) = &args.idempotency_key {
            idempotency::check_key(key)?;
            let digest = idempotency::digest_request("POST", "/v1/companies", Value::Object(args.body.clone()).to_string().as_bytes());
            if let idempotency::Claim::Replay(stored) = idempotency::claim(conn, &ws.workspace_id, &ctx.identity.user_id, key, "/v1/companies", &digest).await? {
                return Ok(stored.body);
            }
        }
        let company = to_value(&companies::create(&ctx, conn, ws, input).await?)?;
        if let Some(key) = &args.idempotency_key {
            idempotency::store(conn, &ws.workspace_id, key, &idempotency::Stored { status: 201, body: company.clone() }).await?;
        }
        Ok(company)
    })
}

fn update<'a>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let ctx = call.ctx.op_context().await?;
        let args = split(&call.arguments);
        let ws = workspace(&ctx, &args, call.ctx.default_workspace.as_deref())?;
        let input: CompanyUpdate = parse(Value::Object(args.body.clone()))?;
        to_value(&companies::update(&ctx, conn, ws, args.id.as_deref().unwrap_or_default(), input).await?)
    })
}

fn delete<'a>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let ctx = call.ctx.op_context().await?;
        let args = split(&call.arguments);
        let ws = workspace(&ctx, &args, call.ctx.default_workspace.as_deref())?;
        let id = args.id.as_deref().unwrap_or_default();
        companies::delete(&ctx, conn, ws, id).await?;
        Ok(json!({ "deleted": true, "id": id }))
    })
}

fn describe_delete<'a>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<String, ApiError>> {
    Box::pin(async move {
        let ctx = call.ctx.op_context().await?;
        let args = split(&call.arguments);
        let ws = workspace(&ctx, &args, call.ctx.default_workspace.as_deref())?;
        let company = companies::get(&ctx, conn, ws, args.id.as_deref().unwrap_or_default()).await?;
        Ok(format!(
            "Delete the company {} (CNPJ {}) from the workspace {}? This cannot be undone.",
            company.name, company.cnpj, ws.workspace_name
        ))
    })
}

