//! The record tools every resource shares — list, get, create, update, delete — written
//! once, generic over the resource's operations. A resource module implements
//! [`Records`] (and [`Writable`] / [`Deletable`]) by naming its `/v1` operations and
//! request types; its catalogue rows are built by [`list_tool`], [`get_tool`],
//! [`create_tool`], [`update_tool`] and [`delete_tool`], which carry the permission,
//! annotations, schemas, handler and confirmation message of each shape.

use std::future::Future;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use sqlx::AnyConnection;

use super::{get_schema, id_schema, list_request, list_schema, project, project_page, projected, write_schema, Route, Scope, CREATE, DESTRUCTIVE, READ, UPDATE};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::mcp::tools::{BoxFuture, ToolCall, ToolSpec};
use crate::ops::list::{ListRequest, ListSpec};
use crate::ops::openapi::page_of;
use crate::ops::validate::{parse, schema_of};
use crate::ops::{OpContext, Page};
use crate::storage::identity::Membership;

/// A resource's read operations.
pub trait Records: 'static {
    const RESOURCE: Resource;
    /// The `/v1` collection (routes and the idempotency key's fingerprint).
    const COLLECTION: &'static str;
    /// What a confirmation calls one record: "payable", "person", …
    const NOUN: &'static str;
    type Row: Serialize + JsonSchema;
    type Record: Serialize + JsonSchema;
    fn spec() -> &'static ListSpec;
    fn list(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, request: &ListRequest) -> impl Future<Output = Result<Page<Self::Row>, ApiError>> + Send;
    fn get(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> impl Future<Output = Result<Self::Record, ApiError>> + Send;
    /// The record in the user's terms, for a confirmation ("“Aluguel” to Imobiliária
    /// Centro, R$ 4.500,00 due 2026-11-10").
    fn label(record: &Self::Record) -> String;
}

/// A resource's create and update operations.
pub trait Writable: Records {
    type Create: DeserializeOwned + JsonSchema + Send;
    type Created: Serialize + JsonSchema;
    type Update: DeserializeOwned + JsonSchema + Send;
    fn create(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, input: Self::Create) -> impl Future<Output = Result<Self::Created, ApiError>> + Send;
    fn update(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str, input: Self::Update) -> impl Future<Output = Result<Self::Record, ApiError>> + Send;
}

/// A resource's delete operation.
pub trait Deletable: Records {
    fn delete(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> impl Future<Output = Result<(), ApiError>> + Send;
}

pub fn to_value<T: Serialize>(value: &T) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(|_| ApiError::internal())
}

/// `{"deleted": true, "id": …}`: what a delete tool answers.
pub fn deleted_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "deleted": { "type": "boolean" }, "id": { "type": "string", "format": "uuid" } },
        "required": ["deleted", "id"],
    })
}

/// The record a destructive call is about, for its confirmation message: `None` when
/// the caller may change it but not read it (the message then names it by id; the
/// operation checks its own permission when it runs). Not found is an error.
pub async fn peek<R: Records>(s: &Scope<'_>, conn: &mut AnyConnection, id: &str) -> Result<Option<R::Record>, ApiError> {
    match R::get(&s.ctx, conn, s.ws, id).await {
        Ok(record) => Ok(Some(record)),
        Err(e) if matches!(e.code, crate::error::ErrorCode::InsufficientScope | crate::error::ErrorCode::Forbidden) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The record's label for a confirmation, or its id when the caller cannot read it.
pub async fn label_of<R: Records>(s: &Scope<'_>, conn: &mut AnyConnection, id: &str) -> Result<String, ApiError> {
    Ok(peek::<R>(s, conn, id).await?.map_or_else(|| id.to_string(), |record| R::label(&record)))
}

fn list_input<R: Records>() -> Value {
    list_schema(R::spec())
}

fn list_output<R: Records>() -> Value {
    page_of(projected(schema_of::<R::Row>()))
}

fn get_output<R: Records>() -> Value {
    projected(schema_of::<R::Record>())
}

fn record_output<R: Records>() -> Value {
    schema_of::<R::Record>()
}

fn created_output<R: Writable>() -> Value {
    schema_of::<R::Created>()
}

fn create_input<R: Writable>() -> Value {
    write_schema(schema_of::<R::Create>(), false, true)
}

fn update_input<R: Writable>() -> Value {
    write_schema(schema_of::<R::Update>(), true, false)
}

fn list<'a, R: Records>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let page = R::list(&s.ctx, conn, s.ws, &list_request(&call.arguments)?).await?;
        Ok(project_page(to_value(&page)?, s.args.fields.as_deref()))
    })
}

fn get<'a, R: Records>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let record = R::get(&s.ctx, conn, s.ws, s.id()).await?;
        Ok(project(to_value(&record)?, s.args.fields.as_deref()))
    })
}

fn create<'a, R: Writable>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let input: R::Create = parse(s.body())?;
        s.once(conn, R::COLLECTION, async |conn| R::create(&s.ctx, conn, s.ws, input).await).await
    })
}

fn update<'a, R: Writable>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let input: R::Update = parse(s.body())?;
        to_value(&R::update(&s.ctx, conn, s.ws, s.id(), input).await?)
    })
}

fn delete<'a, R: Deletable>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        R::delete(&s.ctx, conn, s.ws, s.id()).await?;
        Ok(json!({ "deleted": true, "id": s.id() }))
    })
}

fn describe_delete<'a, R: Deletable>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<String, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let label = label_of::<R>(&s, conn, s.id()).await?;
        Ok(format!("Delete the {} {label} from the workspace {}? This cannot be undone.", R::NOUN, s.ws.workspace_name))
    })
}

/// `finance_<resource>_list`
pub const fn list_tool<R: Records>(name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        title,
        description,
        permission: Some((R::RESOURCE, Access::Read)),
        annotations: READ,
        route: Route::get(R::COLLECTION, ""),
        input_schema: list_input::<R>,
        output_schema: Some(list_output::<R>),
        handler: list::<R>,
        describe: None,
    }
}

/// `finance_<resource>_get`
pub const fn get_tool<R: Records>(name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        title,
        description,
        permission: Some((R::RESOURCE, Access::Read)),
        annotations: READ,
        route: Route::get(R::COLLECTION, "/{id}"),
        input_schema: get_schema,
        output_schema: Some(get_output::<R>),
        handler: get::<R>,
        describe: None,
    }
}

/// `finance_<resource>_create` (idempotent with a key)
pub const fn create_tool<R: Writable>(name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        title,
        description,
        permission: Some((R::RESOURCE, Access::Write)),
        annotations: CREATE,
        route: Route::post(R::COLLECTION, ""),
        input_schema: create_input::<R>,
        output_schema: Some(created_output::<R>),
        handler: create::<R>,
        describe: None,
    }
}

/// `finance_<resource>_update`
pub const fn update_tool<R: Writable>(name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        title,
        description,
        permission: Some((R::RESOURCE, Access::Write)),
        annotations: UPDATE,
        route: Route::patch(R::COLLECTION, "/{id}"),
        input_schema: update_input::<R>,
        output_schema: Some(record_output::<R>),
        handler: update::<R>,
        describe: None,
    }
}

/// `finance_<resource>_delete` (destructive: confirmed by the user)
pub const fn delete_tool<R: Deletable>(name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        title,
        description,
        permission: Some((R::RESOURCE, Access::Delete)),
        annotations: DESTRUCTIVE,
        route: Route::delete(R::COLLECTION, "/{id}"),
        input_schema: id_schema,
        output_schema: Some(deleted_schema),
        handler: delete::<R>,
        describe: Some(describe_delete::<R>),
    }
}

/// Implements [`Records`], [`Writable`] and [`Deletable`] for a resource whose `/v1`
/// operations have the common signatures (`module::{list, get, create, update, delete}`).
macro_rules! records {
    (
        $ty:ident, $module:ident, $resource:expr, $collection:literal, $noun:literal,
        row: $row:ty, record: $record:ty, create: $create:ty, created: $created:ty, update: $update:ty,
        label: |$r:ident| $label:expr
    ) => {
        pub struct $ty;

        impl $crate::mcp::catalogue::records::Records for $ty {
            const RESOURCE: $crate::domain::roles::Resource = $resource;
            const COLLECTION: &'static str = $collection;
            const NOUN: &'static str = $noun;
            type Row = $row;
            type Record = $record;
            fn spec() -> &'static $crate::ops::list::ListSpec {
                &$module::LIST
            }
            async fn list(
                ctx: &$crate::ops::OpContext<'_>,
                conn: &mut sqlx::AnyConnection,
                ws: &$crate::storage::identity::Membership,
                request: &$crate::ops::list::ListRequest,
            ) -> Result<$crate::ops::Page<$row>, $crate::error::ApiError> {
                $module::list(ctx, conn, ws, request).await
            }
            async fn get(
                ctx: &$crate::ops::OpContext<'_>,
                conn: &mut sqlx::AnyConnection,
                ws: &$crate::storage::identity::Membership,
                id: &str,
            ) -> Result<$record, $crate::error::ApiError> {
                $module::get(ctx, conn, ws, id).await
            }
            fn label($r: &$record) -> String {
                $label
            }
        }

        impl $crate::mcp::catalogue::records::Writable for $ty {
            type Create = $create;
            type Created = $created;
            type Update = $update;
            async fn create(
                ctx: &$crate::ops::OpContext<'_>,
                conn: &mut sqlx::AnyConnection,
                ws: &$crate::storage::identity::Membership,
                input: $create,
            ) -> Result<$created, $crate::error::ApiError> {
                $module::create(ctx, conn, ws, input).await
            }
            async fn update(
                ctx: &$crate::ops::OpContext<'_>,
                conn: &mut sqlx::AnyConnection,
                ws: &$crate::storage::identity::Membership,
                id: &str,
                input: $update,
            ) -> Result<$record, $crate::error::ApiError> {
                $module::update(ctx, conn, ws, id, input).await
            }
        }

        impl $crate::mcp::catalogue::records::Deletable for $ty {
            async fn delete(
                ctx: &$crate::ops::OpContext<'_>,
                conn: &mut sqlx::AnyConnection,
                ws: &$crate::storage::identity::Membership,
                id: &str,
            ) -> Result<(), $crate::error::ApiError> {
                $module::delete(ctx, conn, ws, id).await
            }
        }
    };
}
pub(crate) use records;
