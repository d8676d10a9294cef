//! The approval gate: a workspace setting, on by default. A payable created through the
//! API or a tool in a gated workspace starts `pending_approval`. A person approves it
//! (`creation_approved`) or rejects it for good (`creation_rejected`) in the dashboard:
//! no route and no tool does, here the `approve` command stands in for the dashboard
//! ([`decide`]). Seeded and imported payables, and those created where the gate is off,
//! are official bills (null).
//!
//! One rule for every read: a payable waiting for approval is a real obligation, so
//! every figure counts it as it counts an official bill ([`OWED`]: the totals, the
//! aging, the cash flow's projections, the income statement, the id sweep); a list
//! shows it when asked for it, by `payment_approval` or by `id`, and otherwise leaves it
//! out as the real API does ([`OFFICIAL`]: the list's default); a get reads it. What acts
//! on it waits for the approval: it is not sent to the bank nor reconciled, so the
//! reconciliation suggestions leave it out. A rejected payable is in no figure and no
//! sweep, only in a list that asks for it.
//!
//! The gate covers the payee too: a change, through a door of a gated workspace, of
//! what an official or approved payable pays — its amount, its due date, its person, its
//! payment method or coordinates (the beneficiary among them) — sends it back to
//! `pending_approval` ([`again`], [`send_back`], audited), so a changed destination
//! needs a person again before the bank pays it.

use crate::domain::channel::Channel;
use crate::domain::dates::Timestamp;
use crate::error::ApiError;
use crate::storage::audit::{self, AuditEvent};
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn, Db};

/// The condition the bills the gate lets through meet (official or approved): a
/// payable list's default, what may be sent to the bank or reconciled (the suggestions).
/// [`official`] writes it for another name of the table.
pub const OFFICIAL: &str = "(billings.payment_approval IS NULL OR billings.payment_approval = 'creation_approved')";

/// The condition the bills owed meet: every one but those a person rejected (a bill
/// waiting for approval is owed). Every figure asks it — the totals, the id sweep; the
/// reports' running totals (migration 23) and the cash flow's (migration 24) keep the
/// same condition. [`owed`] writes it for another name of the table.
pub const OWED: &str = "COALESCE(billings.payment_approval, '') <> 'creation_rejected'";

/// Whether a payable at `approval` is one the gate lets through ([`OFFICIAL`], read from
/// a row already fetched).
pub fn is_official(approval: Option<&str>) -> bool {
    matches!(approval, None | Some("creation_approved"))
}

/// [`OFFICIAL`] for the table named `table` in a statement (`b`).
pub fn official(table: &str) -> String {
    OFFICIAL.replace("billings.", &format!("{table}."))
}

/// [`OWED`] for the table named `table` in a statement (`b`).
pub fn owed(table: &str) -> String {
    OWED.replace("billings.", &format!("{table}."))
}

/// Where a payable created now by `channel` in the workspace starts at the gate.
pub async fn at_creation(conn: &mut Conn, ws: &Membership, channel: Channel) -> Result<Option<&'static str>, ApiError> {
    if channel == Channel::System {
        return Ok(None);
    }
    let gated: Option<i64> = sql::query("SELECT payment_approval_gate FROM workspaces WHERE id = $1")
        .bind(&ws.workspace_id)
        .map_optional(&mut *conn, |row| row.try_get(0))
        .await?;
    Ok((gated == Some(1)).then_some("pending_approval"))
}

/// What a change of a bill touches of what its payment depends on.
#[derive(Debug, Clone, Copy, Default)]
pub struct PayeeChange {
    pub amount: bool,
    pub due_date: bool,
    pub competence_date: bool,
    pub person: bool,
    /// The payment method or coordinates (the beneficiary among them).
    pub coordinates: bool,
    /// The account it is paid from.
    pub accounts: bool,
}

impl PayeeChange {
    /// Whether anything the bank would act on changes.
    pub fn any(&self) -> bool {
        self.amount || self.due_date || self.competence_date || self.person || self.coordinates || self.accounts
    }

    /// What of whom and how much is paid changes, by field: what the gate approves again.
    fn of_the_payee(&self) -> Vec<&'static str> {
        [
            (self.amount, "amount"),
            (self.due_date, "due_date"),
            (self.person, "person_id"),
            (self.coordinates, "payment_coordinates"),
        ]
        .into_iter()
        .filter_map(|(changed, field)| changed.then_some(field))
        .collect()
    }
}

/// Whether changing a payable whose approval is `approval` by `change` through `channel` sends the payable back to
/// the gate: it is official or approved, the change touches whom or how much it pays,
/// and the workspace's gate holds what `channel` makes. Answers the fields that changed.
pub async fn again(
    conn: &mut Conn,
    ws: &Membership,
    channel: Channel,
    approval: Option<&str>,
    change: &PayeeChange,
) -> Result<Option<Vec<&'static str>>, ApiError> {
    let changed = change.of_the_payee();
    if changed.is_empty() || !is_official(approval) {
        return Ok(None);
    }
    Ok(at_creation(conn, ws, channel).await?.map(|_| changed))
}

/// Sends the payable `id` back to the gate (`pending_approval`, its approval cleared),
/// audited with what changed: a person approves it again.
pub async fn send_back(
    ctx: &crate::ops::OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    changed: &[&str],
) -> Result<(), ApiError> {
    sql::query(
        "UPDATE billings SET payment_approval = 'pending_approval', approved_at = NULL
          WHERE workspace_id = $1 AND kind = 'payable' AND id = $2",
    )
    .bind(&ws.workspace_id)
    .bind(id)
    .execute(&mut *conn)
    .await?;
    crate::ops::machinery::common::audit_write_with(
        ctx,
        conn,
        ws,
        ("payables.approval_reset", "payable", id),
        Some(serde_json::json!({ "changed": changed, "payment_approval": "pending_approval" })),
    )
    .await
}

/// The approval's trail of a payable: `approved_at`, `rejected_at`, `rejection_reason`.
pub async fn trail(
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<(Option<Timestamp>, Option<Timestamp>, Option<String>), ApiError> {
    Ok(sql::query(
        "SELECT approved_at, rejected_at, rejection_reason FROM billings WHERE workspace_id = $1 AND id = $2",
    )
    .bind(&ws.workspace_id)
    .bind(id)
    .map_optional(&mut *conn, |row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
    .await?
    .unwrap_or_default())
}

/// A person's decision on a payable at the gate.
#[derive(Debug, Clone)]
pub enum Decision {
    Approve,
    Reject { reason: String },
}

/// Approves or rejects the payable `id` waiting at the gate (the dashboard's act; the
/// `approve` command): answers its new state. Refused when it does not wait there.
pub async fn decide(db: &Db, id: &str, decision: &Decision) -> Result<&'static str, String> {
    let now = Timestamp::now().to_string();
    let (state, approved, rejected, reason) = match decision {
        Decision::Approve => ("creation_approved", Some(now.as_str()), None, None),
        Decision::Reject { reason } => ("creation_rejected", None, Some(now.as_str()), Some(reason.as_str())),
    };
    let mut tx = db.begin().await.map_err(|e| e.to_string())?;
    let workspace: Option<String> = sql::query(
        "SELECT workspace_id FROM billings WHERE id = $1 AND kind = 'payable' AND payment_approval = 'pending_approval'",
    )
    .bind(id)
    .map_optional(&mut *tx, |row| row.try_get(0))
    .await
    .map_err(|e| e.to_string())?;
    let Some(workspace) = workspace else {
        return Err(format!("no payable {id} waits for approval"));
    };
    sql::query(
        "UPDATE billings SET payment_approval = $1, approved_at = $2, rejected_at = $3, rejection_reason = $4,
                updated_at = $5, updated_via = 'system'
          WHERE id = $6 AND payment_approval = 'pending_approval'",
    )
    .bind(state)
    .bind(approved)
    .bind(rejected)
    .bind(reason)
    .bind(&now)
    .bind(id)
    .execute(&mut *tx)
    .await
    .map_err(|e| e.to_string())?;
    let action = match decision {
        Decision::Approve => "payables.approve",
        Decision::Reject { .. } => "payables.reject",
    };
    audit::append(
        &mut *tx,
        Channel::System,
        &AuditEvent {
            workspace_id: Some(&workspace),
            user_id: None,
            action,
            target_type: Some("payable"),
            target_id: Some(id),
            outcome: "ok",
            details: reason.map(|r| serde_json::json!({ "reason": r }).to_string()),
            client_id: None,
        },
    )
    .await
    .map_err(|e| e.to_string())?;
    tx.commit().await.map_err(|e| e.to_string())?;
    Ok(state)
}

/// Turns a workspace's gate on or off (its owners' setting in the dashboard; the
/// `approval-gate` command here). Payables already waiting keep waiting.
pub async fn set_gate(db: &Db, workspace_id: &str, on: bool) -> Result<(), String> {
    let changed = sql::query("UPDATE workspaces SET payment_approval_gate = $1 WHERE id = $2")
        .bind(i64::from(on))
        .bind(workspace_id)
        .execute(db)
        .await
        .map_err(|e| e.to_string())?;
    if changed == 0 {
        return Err(format!("no workspace {workspace_id}"));
    }
    Ok(())
}
