//! The bank list (`GET /v1/banks`, scope `finance.banks`, read-only): the participants of
//! the Central Bank's STR that have a COMPE code, global to every workspace (the list is
//! loaded by a migration and refreshed by `banks import`: `storage::banks`). A bank's
//! `id` is a name-based UUID of its ISPB (`domain::banks::bank_id`), the same on every
//! deployment. Accounts name their bank from this list; payees' `bank_code` and
//! `bank_ispb` are checked against it (`ops::refs`).

use schemars::JsonSchema;
use serde::Serialize;

use super::machinery::list::{list_spec, ListRequest, ListSpec};
use super::machinery::page;
use super::machinery::resource::{Declaration, Op, Records};
use super::{OpContext, Page};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn, Row};

/// A bank as `/v1` answers it (`BankV1`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Bank {
    pub id: String,
    /// The COMPE code, 3 digits with leading zeros ("001", "341").
    pub code: String,
    /// The bank's name as the Central Bank lists it (its long name).
    pub name: String,
    /// The ISPB, 8 digits: what a Pix or TED names the bank by.
    #[schemars(extend("x-kobana-extension" = "the bank's ISPB"))]
    pub ispb: String,
    /// The short name of the Central Bank's list ("BCO DO BRASIL S.A.").
    #[schemars(extend("x-kobana-extension" = "the bank's short name"))]
    pub short_name: String,
}

/// The `/v1/banks` resource.
pub struct Banks;

const COLUMNS: &str = "banks.id, banks.code, banks.name, banks.ispb, banks.short_name";

fn from_row(row: &Row<'_>) -> Result<Bank, crate::storage::Error> {
    Ok(Bank {
        id: row.try_get(0)?,
        code: row.try_get(1)?,
        name: row.try_get(2)?,
        ispb: row.try_get(3)?,
        short_name: row.try_get(4)?,
    })
}

impl Records for Banks {
    const LIST: &'static ListSpec = &LIST;
    const RESOURCE: Resource = Resource::Banks;
    const COLLECTION: &'static str = "/v1/banks";
    const NOUN: &'static str = "bank";
    type Row = Bank;
    type Record = Bank;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Bank>, ApiError> {
        page::list::<Self, _>(ctx, conn, ws, request, COLUMNS, from_row).await
    }
    /// A bank of the list by id (no route: the real API has none).
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Bank, ApiError> {
        ctx.authorize(ws, Resource::Banks, Access::Read)?;
        let id = super::machinery::common::path_id(id, "Bank")?;
        sql::query(format!("SELECT {COLUMNS} FROM banks WHERE banks.id = $1 AND {OFFERED}"))
            .bind(&id)
            .map_optional(&mut *conn, from_row)
            .await?
            .ok_or_else(|| ApiError::not_found("Bank"))
    }
    fn label(bank: &Bank) -> String {
        format!("{} {}", bank.code, bank.name)
    }
}

/// The banks the list offers: on the Central Bank's current list, with a COMPE code.
const OFFERED: &str = "banks.listed = 1 AND banks.code IS NOT NULL";

pub static LIST: ListSpec = list_spec!(banks where OFFERED;
    filters: code: Text, name: Text, ispb: Text @ "bank by ISPB";
    sorts: name, code;
    default: name)
.global();

/// The `/v1/banks` operations.
pub static OPERATIONS: Declaration = Declaration::of::<Banks>(&[Op::list::<Banks>("List banks").tool(
    "finance_banks_list",
    "List banks",
    "Lists the banks (Central Bank's list of STR participants): id, COMPE code, name and ISPB. Filter by code \
(\"341\") or name; an account's bank is one of these (bank_id or bank_code).",
)]);
