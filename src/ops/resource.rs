//! A resource's declaration: the table of its `/v1` operations (route, what each needs,
//! what it takes and answers) and the traits that name its operation functions. Both
//! doors are generated from these: the REST routes mount the declared routes, the MCP
//! tools call the same functions, the OpenAPI document lists the rows, and the scope
//! of each row follows from the resource (`finance.<resource>`, `.write`).
//!
//! The record shapes — list, get, create, update, delete — are rows the doors know how
//! to serve for any resource ([`Shape`]); every other operation is [`Shape::Own`]:
//! declared here, routed by the resource's own handler.

use std::future::Future;

use crate::storage::Conn;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::list::{ListRequest, ListSpec};
use super::openapi::page_of;
use super::validate::schema_of;
use super::{OpContext, Page};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::storage::identity::Membership;

/// A resource's read operations.
pub trait Records: 'static {
    const RESOURCE: Resource;
    /// The `/v1` collection (routes and the idempotency key's fingerprint).
    const COLLECTION: &'static str;
    /// What a confirmation calls one record: "payable", "person", …
    const NOUN: &'static str;
    type Row: Serialize + JsonSchema + Send;
    type Record: Serialize + JsonSchema + Send;
    /// The list: its table, filters and sorts, and which rows are live.
    const LIST: &'static ListSpec;
    fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> impl Future<Output = Result<Page<Self::Row>, ApiError>> + Send;
    fn get(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
    ) -> impl Future<Output = Result<Self::Record, ApiError>> + Send;
    /// The list page with `request.fields` only, written as JSON straight from the rows,
    /// where the resource can (every field asked for is in its rows); `None` where it
    /// cannot, and the caller writes the typed page ([`Records::list`]).
    fn list_written(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> impl Future<Output = Result<Option<Vec<u8>>, ApiError>> + Send {
        let _ = (ctx, conn, ws, request);
        std::future::ready(Ok(None))
    }
    /// The record in the user's terms, for a confirmation ("“Aluguel” to Imobiliária
    /// Centro, R$ 4.500,00 due 2026-11-10").
    fn label(record: &Self::Record) -> String;
}

/// A resource's create and update operations.
pub trait Writable: Records {
    type Create: DeserializeOwned + JsonSchema + Send;
    type Created: Serialize + JsonSchema + Send;
    type Update: DeserializeOwned + JsonSchema + Send;
    fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: Self::Create,
    ) -> impl Future<Output = Result<Self::Created, ApiError>> + Send;
    fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: Self::Update,
    ) -> impl Future<Output = Result<Self::Record, ApiError>> + Send;
}

/// A resource's delete operation.
pub trait Deletable: Records {
    fn delete(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
    ) -> impl Future<Output = Result<(), ApiError>> + Send;
}

/// What a row of the table is, for the doors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    List,
    Get,
    Create,
    Update,
    Delete,
    /// Anything else (an id sweep, aggregates, an action): the resource routes it.
    Own,
}

/// One `/v1` operation.
#[derive(Debug, Clone, Copy)]
pub struct Op {
    pub shape: Shape,
    pub method: &'static str,
    /// The path after the collection: `""`, `"/{id}"`, `"/{id}/settle"`.
    pub suffix: &'static str,
    /// What the operation does to the collection (`list`, `settle`, `adjust_balance`):
    /// its OpenAPI `operationId` is `{collection}_{action}` ([`Declaration::id`]).
    pub action: &'static str,
    /// One line for the OpenAPI document; `{collection}` stands for the collection's
    /// name ([`Declaration::summary`]).
    pub summary: &'static str,
    /// What the caller needs (the scope and the role rule follow from it).
    pub access: Access,
    /// The request body's schema (from the request type).
    pub request: Option<fn() -> Value>,
    pub success: u16,
    pub response: Option<fn() -> Value>,
    /// Its MCP tool, if it has one: the name, title and description; the tool's
    /// permission, route, annotations and schemas follow from the row.
    pub tool: Option<Tool>,
    /// Whether the user confirms it before it runs (a destructive tool: it moves money
    /// or changes what is owed). Deletes always are.
    pub confirmed: bool,
}

/// What an agent reads of an operation's tool.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// `finance_<resource>_<action>`.
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
}

fn page_schema<R: Records>() -> Value {
    page_of(schema_of::<R::Row>())
}

impl Op {
    const fn shaped(
        shape: Shape,
        method: &'static str,
        suffix: &'static str,
        action: &'static str,
        summary: &'static str,
        access: Access,
    ) -> Op {
        Op {
            shape,
            method,
            suffix,
            action,
            summary,
            access,
            request: None,
            success: 200,
            response: None,
            tool: None,
            confirmed: matches!(shape, Shape::Delete),
        }
    }

    /// `GET {collection}`: a page of rows.
    pub const fn list<R: Records>(summary: &'static str) -> Op {
        Op::shaped(Shape::List, "get", "", "list", summary, Access::Read).answers(200, page_schema::<R>)
    }

    /// `GET {collection}/{id}`
    pub const fn get<R: Records>(summary: &'static str) -> Op {
        Op::shaped(Shape::Get, "get", "/{id}", "get", summary, Access::Read).answers(200, schema_of::<R::Record>)
    }

    /// `POST {collection}`: 201 (idempotent with a key).
    pub const fn create<R: Writable>(summary: &'static str) -> Op {
        Op::shaped(Shape::Create, "post", "", "create", summary, Access::Write)
            .takes(schema_of::<R::Create>)
            .answers(201, schema_of::<R::Created>)
    }

    /// `PATCH {collection}/{id}`
    pub const fn update<R: Writable>(summary: &'static str) -> Op {
        Op::shaped(Shape::Update, "patch", "/{id}", "update", summary, Access::Write)
            .takes(schema_of::<R::Update>)
            .answers(200, schema_of::<R::Record>)
    }

    /// `DELETE {collection}/{id}`: 204.
    pub const fn delete<R: Deletable>(summary: &'static str) -> Op {
        Op { success: 204, ..Op::shaped(Shape::Delete, "delete", "/{id}", "delete", summary, Access::Delete) }
    }

    /// Another read of the resource (`GET {collection}{suffix}`).
    pub const fn read(suffix: &'static str, action: &'static str, summary: &'static str) -> Op {
        Op::shaped(Shape::Own, "get", suffix, action, summary, Access::Read)
    }

    /// Another write of the resource (`{method} {collection}{suffix}`).
    pub const fn write(method: &'static str, suffix: &'static str, action: &'static str, summary: &'static str) -> Op {
        Op::shaped(Shape::Own, method, suffix, action, summary, Access::Write)
    }

    /// The request body.
    pub const fn takes(self, request: fn() -> Value) -> Op {
        Op { request: Some(request), ..self }
    }

    /// The success status and its body.
    pub const fn answers(self, success: u16, response: fn() -> Value) -> Op {
        Op { success, response: Some(response), ..self }
    }

    /// The success status of an answer without a body.
    pub const fn status(self, success: u16) -> Op {
        Op { success, ..self }
    }

    /// Its MCP tool.
    pub const fn tool(self, name: &'static str, title: &'static str, description: &'static str) -> Op {
        self.with(Tool { name, title, description })
    }

    /// Its MCP tool, described elsewhere (a kind's texts).
    pub const fn with(self, tool: Tool) -> Op {
        Op { tool: Some(tool), ..self }
    }

    /// Confirmed by the user before it runs (SPEC §5.2).
    pub const fn confirmed(self) -> Op {
        Op { confirmed: true, ..self }
    }
}

/// The operations of one `/v1` collection.
#[derive(Debug)]
pub struct Declaration {
    pub resource: Resource,
    pub collection: &'static str,
    pub operations: &'static [Op],
}

impl Declaration {
    /// The operations of the resource `R`, under its collection.
    pub const fn of<R: Records>(operations: &'static [Op]) -> Declaration {
        Declaration { resource: R::RESOURCE, collection: R::COLLECTION, operations }
    }

    /// The path of an operation.
    pub fn path(&self, op: &Op) -> String {
        format!("{}{}", self.collection, op.suffix)
    }

    /// The collection's name: `payables`, `financial-accounts`.
    pub fn name(&self) -> &'static str {
        self.collection.trim_start_matches("/v1/")
    }

    /// The OpenAPI `operationId` of an operation: `{collection}_{action}`, the
    /// collection's hyphens as underscores (`financial_accounts_adjust_balance`).
    pub fn id(&self, op: &Op) -> String {
        format!("{}_{}", self.name().replace('-', "_"), op.action)
    }

    /// The summary of an operation, `{collection}` replaced by the collection's name.
    pub fn summary(&self, op: &Op) -> String {
        op.summary.replace("{collection}", self.name())
    }

    /// The row of `shape` (the record shapes appear once at most).
    pub fn shaped(&self, shape: Shape) -> Option<&Op> {
        self.operations.iter().find(|op| op.shape == shape)
    }
}
