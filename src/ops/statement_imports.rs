//! Statement imports (`POST /v1/financial-accounts/{id}/statement-imports`, tool
//! `finance_accounts_import_statement`; this product's: the real one imports in its web
//! app only): an uploaded OFX or CSV file (`/v1/attachments`) becomes the account's
//! posted transactions, one per movement.
//!
//! * **Once per movement.** Each transaction keeps the statement's own id of its
//!   movement (OFX `FITID`, or the key a CSV row derives, `domain/statement.rs`), unique
//!   per account: a movement already imported — by this file earlier, another file
//!   overlapping it, or twice in one file — is counted as a duplicate and creates
//!   nothing. A second import of the same file creates nothing.
//! * **What each row gets.** The sign is the direction (money out: a debit), the amount
//!   its absolute value, the bank's text the description and `bank_description`, the
//!   memo the notes, the check or reference number the document; the company's
//!   transaction rules then fill the rest (`ops/automatic_rules.rs`: the statement's
//!   description is not the user's, so `set_description` may rename it).
//! * **The right account.** An OFX statement naming another bank (`BANKID`) or account
//!   number (`ACCTID`) than the account's is refused whole (422 `account_mismatch`).
//! * **Refused lines** — unreadable dates or amounts, a movement without its id, a date
//!   in the company's closed period — are answered with their line numbers; the others
//!   are imported. A file that cannot be read at all is 422 `invalid_statement`.
//! * **Who wrote them.** The rows are an import's, `created_via = "system"` (SPEC §5), and
//!   the user's (`created_by`); the audit lines (the import's, each row's) name the door.
//! * The whole import is one database transaction (the door's): a failure writes
//!   nothing; an import racing another for the same movement is 409 `conflict` (the
//!   unique index), and its retry counts the movement as a duplicate. Reading the file needs the attachments' read scope, writing the rows the
//!   transactions' write scope, besides the accounts' write scope of the route.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::accounts::Account;
use super::apportionment::{self, Allocation};
use super::automatic_rules::{Fresh, RuleScope, Rules};
use super::ledger::{self, NewTransaction};
use super::machinery::common::{audit_write, audit_write_with, body_id};
use super::machinery::refs::{self, Polarity};
use super::machinery::resource::{parse, reply, Call, Running};
use super::registers::Owner;
use super::OpContext;
use crate::domain::channel::Channel;
use crate::domain::money::Cents;
use crate::domain::roles::{Access, Resource};
use crate::domain::statement::{self, Line, Statement};
use crate::error::{ApiError, ErrorCode};
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn};

/// `POST /v1/financial-accounts/{id}/statement-imports`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatementImportRequest {
    /// An uploaded `.ofx` or `.csv` file (`finance_attachments_upload`, `/v1/attachments`).
    pub attachment_id: String,
}

/// A line of the file that was not imported, and why.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RefusedLine {
    /// 1-based, in the file as decoded.
    pub line: usize,
    pub reason: String,
    pub message: String,
}

/// What an import did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StatementImport {
    pub financial_account_id: String,
    pub attachment_id: String,
    /// `ofx` or `csv`.
    pub format: String,
    /// Movements read from the file.
    pub movements: usize,
    pub created: usize,
    /// Movements already in the account (imported before, or twice in this file).
    pub duplicates: usize,
    pub refused: Vec<RefusedLine>,
    /// The transactions created, in the file's order.
    pub transaction_ids: Vec<String>,
}

/// Imports the statement `input.attachment_id` into the account `id`.
pub async fn import(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    input: StatementImportRequest,
) -> Result<StatementImport, ApiError> {
    ctx.authorize(ws, Resource::Accounts, Access::Write)?;
    ctx.authorize(ws, Resource::Transactions, Access::Write)?;
    let account = super::accounts::find(conn, ws, id).await?;
    let attachment_id = body_id("attachment_id", &input.attachment_id)?;
    let located = super::attachments::locate(ctx, conn, ws, &attachment_id).await.map_err(|e| match e.code {
        ErrorCode::NotFound => refs::not_in_workspace("attachment_id", "Attachment"),
        _ => e,
    })?;
    let file = super::attachments::fetch(ctx, located).await?;
    let statement = statement::parse(&file.content).map_err(|e| {
        ApiError::new(ErrorCode::UnprocessableEntity, format!("The file is not a statement this server reads: {e}"))
            .with_details(json!({"field": "attachment_id", "reason": "invalid_statement"}))
    })?;
    same_account(&account, &statement)?;
    let company = refs::company(conn, ws, "company_id", &account.company_id).await?;
    let mut refused: Vec<RefusedLine> = statement
        .refused
        .iter()
        .map(|r| RefusedLine { line: r.line, reason: r.reason.to_string(), message: r.message.clone() })
        .collect();
    let mut answer = StatementImport {
        financial_account_id: account.id.clone(),
        attachment_id: attachment_id.clone(),
        format: statement.format.as_str().to_string(),
        movements: statement.lines.len(),
        created: 0,
        duplicates: 0,
        refused: Vec::new(),
        transaction_ids: Vec::new(),
    };
    // The rows are an import's (SPEC §5: `created_via = "system"`), written for the user
    // (`created_by`); every audit line, the import's and each row's, names the door it
    // came through.
    let importer = OpContext { channel: Channel::System, ..*ctx };
    // The company's transaction rules, read once for every movement of the file.
    let rules = Rules::of(conn, ws, &company, RuleScope::Transactions).await?;
    for line in &statement.lines {
        // A movement imported before is a duplicate, even once its period has closed.
        if imported(conn, ws, &account.id, &line.fitid).await? {
            answer.duplicates += 1;
            continue;
        }
        if let Err(closed) = refs::check_period(&company, "occurred_at", line.date) {
            refused.push(RefusedLine { line: line.line, reason: "period_closed".into(), message: closed.message });
            continue;
        }
        let polarity = if line.amount.0 < 0 { Polarity::Debit } else { Polarity::Credit };
        let owner = Owner { ctx: &importer, ws, company: &company, polarity };
        let id = insert((ctx, &owner), conn, (&rules, &account.id), line).await?;
        answer.transaction_ids.push(id);
    }
    refused.sort_by_key(|r| r.line);
    answer.created = answer.transaction_ids.len();
    answer.refused = refused;
    let details = json!({
        "attachment_id": attachment_id, "format": answer.format, "created": answer.created,
        "duplicates": answer.duplicates, "refused": answer.refused.len(),
    });
    audit_write_with(
        ctx,
        conn,
        ws,
        ("financial_accounts.import_statement", "financial_account", &account.id),
        Some(details),
    )
    .await?;
    Ok(answer)
}

/// Refuses an OFX statement of another bank or account than `account` (422
/// `account_mismatch`), where both say which: the statement's `BANKID` against the
/// account's COMPE code, its `ACCTID` against the account's number (the ACCTID ends with
/// the number, then its check digit or none; branch digits and zeros may come before). A CSV says neither, and neither does an account without them.
fn same_account(account: &Account, statement: &Statement) -> Result<(), ApiError> {
    let digits = |text: &str| text.chars().filter(char::is_ascii_digit).collect::<String>();
    let number = |text: &str| digits(text).trim_start_matches('0').to_string();
    let bank = match (account.bank_code(), &statement.bank_id) {
        (Some(ours), Some(theirs)) => number(ours) == number(theirs),
        _ => true,
    };
    let held = match (&account.account_number, &statement.account_id) {
        (Some(ours), Some(theirs)) => {
            let (ours, theirs) = (number(ours), digits(theirs));
            let with_digit = format!("{ours}{}", account.account_digit.as_deref().map(digits).unwrap_or_default());
            // Without its check digit, which the account may not have recorded.
            let undigited = &theirs[..theirs.len().saturating_sub(1)];
            !ours.is_empty() && (theirs.ends_with(&with_digit) || theirs.ends_with(&ours) || undigited.ends_with(&ours))
        }
        _ => true,
    };
    if bank && held {
        return Ok(());
    }
    Err(ApiError::new(ErrorCode::UnprocessableEntity, "The statement is of another bank account than this one")
        .with_details(json!({
            "field": "attachment_id", "reason": "account_mismatch",
            "statement": {"bank_id": statement.bank_id, "account_id": statement.account_id},
            "account": {"bank_code": account.bank_code(), "account_number": account.account_number},
        })))
}

/// Whether the account already has the movement `fitid`.
async fn imported(conn: &mut Conn, ws: &Membership, account_id: &str, fitid: &str) -> Result<bool, ApiError> {
    let found = sql::query(
        "SELECT 1 FROM financial_transactions WHERE workspace_id = $1 AND financial_account_id = $2 AND statement_fitid = $3",
    )
    .bind(&ws.workspace_id)
    .bind(account_id)
    .bind(fitid)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(found.is_some())
}

/// Writes one movement as a posted transaction of the account (stamped as `owner`'s
/// context has it: an import's), with what the company's rules fill, and records its
/// creation in the audit log on the `door` the import came through.
async fn insert(
    (door, owner): (&OpContext<'_>, &Owner<'_, '_>),
    conn: &mut Conn,
    (rules, account_id): (&Rules, &str),
    line: &Line,
) -> Result<String, ApiError> {
    let fresh = Fresh {
        scope: RuleScope::Transactions,
        account_id: Some(account_id),
        polarity: owner.polarity,
        person_id: None,
        description: &line.description,
        notes: line.memo.as_deref(),
    };
    let fill = rules.fire(owner, conn, fresh).await?;
    let amount = Cents(line.amount.0.abs());
    let id = ledger::insert(
        owner.ctx,
        conn,
        owner.ws,
        &NewTransaction {
            company_id: owner.company.id.clone(),
            account_id: account_id.to_string(),
            description: fill.description.unwrap_or_else(|| line.description.clone()),
            amount,
            occurred_at: line.date,
            polarity: Some(owner.polarity),
            category_id: fill.category_id,
            person_id: fill.person_id,
            bank_description: Some(line.description.clone()),
            document: line.document.clone(),
            notes: line.memo.clone(),
            statement_fitid: Some(line.fitid.clone()),
            ..NewTransaction::default()
        },
    )
    .await
    .map_err(|e| match e.code {
        ErrorCode::Conflict => e.with_details(json!({"field": "attachment_id", "reason": "duplicate"})),
        _ => e,
    })?;
    if let Some(center) = fill.classification_center_id {
        apportionment::replace(conn, owner.ws, "transaction", &id, &[Allocation::whole(center, amount)]).await?;
    }
    audit_write(door, conn, owner.ws, "financial_transactions.create", "financial_transaction", &id).await?;
    Ok(id)
}

pub(super) fn run_import(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(import(c.ctx, c.conn, c.ws, c.id, parse(c.body)?).await?) })
}
