//! The ledger: inserting financial transactions (by hand, by settlement, by transfer or
//! by balance adjustment) and computing an account's balance, which is never stored:
//! opening balance + Σ credits − Σ debits of its realised (non-pending) transactions.

use crate::ops::machinery::stamps::Stamp;
use crate::storage::{sql, Conn};

use super::machinery::refs::Polarity;
use super::OpContext;
use crate::domain::dates::{Date, Timestamp};
use crate::domain::money::{Amount, Cents};
use crate::error::ApiError;
use crate::storage::identity::Membership;

/// A transaction to insert. References are already checked by the caller.
#[derive(Debug, Clone, Default)]
pub struct NewTransaction {
    pub company_id: String,
    pub account_id: String,
    pub description: String,
    pub amount: Cents,
    pub occurred_at: Date,
    pub competence_date: Option<Date>,
    pub polarity: Option<Polarity>,
    pub category_id: Option<String>,
    pub person_id: Option<String>,
    pub payment_method_kind: Option<String>,
    pub bank_description: Option<String>,
    pub document: Option<String>,
    pub document_date: Option<Date>,
    pub notes: Option<String>,
    pub classified: bool,
    pub is_pending: bool,
    /// Created by the server (settlement, balance adjustment): cannot be deleted directly.
    pub auto_created: bool,
    pub transfer_id: Option<String>,
    /// The bill whose settlement created it.
    pub billing_id: Option<String>,
    /// The statement's own id of the movement it was imported from (unique per account).
    pub statement_fitid: Option<String>,
}

/// A request amount that must be more than zero (400 `invalid_amount` naming `field`).
pub fn positive(field: &str, amount: Amount) -> Result<Cents, ApiError> {
    amount
        .positive()
        .map_err(|e| super::machinery::common::unprocessable(field, "invalid_amount", &format!("{field} {e}")))
}

/// Inserts `tx` (positive amount; direction from `polarity`) and returns its id.
pub async fn insert(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    tx: &NewTransaction,
) -> Result<String, ApiError> {
    let id = uuid::Uuid::new_v4().to_string();
    let now = Timestamp::now();
    let polarity = tx.polarity.unwrap_or(Polarity::Debit);
    sql::query(
        "INSERT INTO financial_transactions
           (id, workspace_id, company_id, financial_account_id, description, bank_description, document, document_date,
            amount_cents, occurred_at, competence_date, transaction_type, category_id, person_id, payment_method_kind,
            classified, is_pending, notes, auto_created, transfer_id, billing_id, statement_fitid,
            created_at, updated_at, created_via, updated_via, created_by, updated_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
                 $23, $23, $24, $24, $25, $25)",
    )
    .bind(&id)
    .bind(&ws.workspace_id)
    .bind(&tx.company_id)
    .bind(&tx.account_id)
    .bind(&tx.description)
    .bind(tx.bank_description.as_deref())
    .bind(tx.document.as_deref())
    .bind(tx.document_date)
    .bind(tx.amount.0)
    .bind(tx.occurred_at)
    .bind(tx.competence_date)
    .bind(polarity.transaction_type())
    .bind(tx.category_id.as_deref())
    .bind(tx.person_id.as_deref())
    .bind(tx.payment_method_kind.as_deref())
    .bind(tx.classified as i64)
    .bind(tx.is_pending as i64)
    .bind(tx.notes.as_deref())
    .bind(tx.auto_created as i64)
    .bind(tx.transfer_id.as_deref())
    .bind(tx.billing_id.as_deref())
    .bind(tx.statement_fitid.as_deref())
    .stamp(ctx, &now)
    .execute(&mut *conn)
    .await
    // Besides the id, only a statement's movement is unique in its account: written
    // meanwhile by another request (the caller says which of its fields it came from).
    .map_err(|e| match &e {
        db if db.is_unique_violation() => {
            ApiError::new(crate::error::ErrorCode::Conflict, "The same statement movement was written meanwhile; retry")
                .with_details(serde_json::json!({"reason": "duplicate"}))
        }
        _ => crate::storage::db_error(e),
    })?;
    Ok(id)
}

/// The balance of an account: opening balance + realised credits − realised debits.
pub async fn balance(conn: &mut Conn, ws: &Membership, account_id: &str) -> Result<Cents, ApiError> {
    let row = sql::query(
        "SELECT CAST(a.opening_balance_cents
              + COALESCE((SELECT SUM(CASE WHEN t.transaction_type = 'credit' THEN t.amount_cents ELSE -t.amount_cents END)
                            FROM financial_transactions t
                           WHERE t.workspace_id = a.workspace_id AND t.financial_account_id = a.id AND t.is_pending = 0), 0)
                AS BIGINT)
           FROM financial_accounts a WHERE a.workspace_id = $1 AND a.id = $2",
    )
    .bind(&ws.workspace_id)
    .bind(account_id)
    .fetch_optional(&mut *conn)
    .await
    ?
    .ok_or_else(|| ApiError::not_found("Financial account"))?;
    // PostgreSQL sums BIGINT into NUMERIC: the CAST brings it back to BIGINT on both.
    let cents: i64 = row.try_get(0)?;
    Ok(Cents(cents))
}

/// Removes the transaction a bill's settlement created (reopen, delete of the bill),
/// with its apportionment and its attachment links. Returns how many transactions went.
pub async fn remove_settlement(conn: &mut Conn, ws: &Membership, billing_id: &str) -> Result<u64, ApiError> {
    // Links to a removed transaction would point at nothing; its apportionment goes with it.
    for dependent in [
        "DELETE FROM attachment_links WHERE target_type = 'transaction' AND workspace_id = $1 AND target_id IN
           (SELECT id FROM financial_transactions WHERE workspace_id = $1 AND billing_id = $2 AND auto_created = 1)",
        "DELETE FROM allocations WHERE owner_type = 'transaction' AND workspace_id = $1 AND owner_id IN
           (SELECT id FROM financial_transactions WHERE workspace_id = $1 AND billing_id = $2 AND auto_created = 1)",
    ] {
        sql::query(dependent).bind(&ws.workspace_id).bind(billing_id).execute(&mut *conn).await?;
    }
    let done = sql::query(
        "DELETE FROM financial_transactions WHERE workspace_id = $1 AND billing_id = $2 AND auto_created = 1",
    )
    .bind(&ws.workspace_id)
    .bind(billing_id)
    .execute(&mut *conn)
    .await?;
    Ok(done)
}
