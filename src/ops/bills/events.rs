//! The banking gateway's events (`POST /v1/webhooks/kobana`), applied to the record
//! they are about: a payment to the payable it pays (`dispatch.rs`), a charge to the
//! receivable it charges (`charges.rs`). Each event is applied once (its id in
//! `gateway_events`), in the door's transaction, by the server itself (`system`) for the
//! user who sent the order to the bank. A payment or Pix charge the gateway made for one
//! of this server's records whose answer was lost is recorded from its event (it names
//! the record: `external_id`); any other event about an object no record here holds yet
//! is [`Applied::Unknown`], for the gateway to deliver again.

use crate::auth::Identity;
use crate::domain::channel::Channel;
use crate::domain::dates::Timestamp;
use crate::domain::roles::{Role, ScopeSet};
use crate::error::ApiError;
use crate::gateway::{Event, Subject};
use crate::ops::{OpContext, Services};
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn};

/// What an event did.
#[derive(Debug, PartialEq, Eq)]
pub enum Applied {
    /// Its status is now the record's mirror.
    Changed,
    /// Already applied, older than what is kept, or of a kind nothing here follows.
    Ignored,
    /// About an object this server does not hold (yet: its order may still be
    /// committing): the gateway should deliver it again later.
    Unknown,
}

/// Who applies what the bank did: the server, for `user_id` (the user who sent the
/// order), allowed what a settlement writes and nothing else.
pub(super) fn system_identity(user_id: Option<String>) -> Identity {
    Identity {
        user_id: user_id.unwrap_or_else(|| "system".into()),
        scopes: ScopeSet::parse(
            "finance.payables finance.payables.write finance.receivables finance.receivables.write \
             finance.transactions.write",
        ),
        jti: None,
        client_id: None,
    }
}

/// Applies one event in the transaction `conn`. Its signature was checked by the door; a
/// body that is not the object its code names is 400.
pub async fn apply_event(services: &Services<'_>, conn: &mut Conn, event: &Event) -> Result<Applied, ApiError> {
    let Some(subject) = event.subject().map_err(ApiError::bad_request)? else { return Ok(Applied::Ignored) };
    let owner = match &subject {
        Subject::Payment(payment) => match super::dispatch::owner(conn, &payment.uid).await? {
            Some(owner) => Some(owner),
            None => super::dispatch::adopt(conn, payment).await?,
        },
        Subject::Pix(charge) => match super::charges::owner(conn, &charge.uid).await? {
            Some(owner) => Some(owner),
            None => super::charges::adopt(conn, charge).await?,
        },
        Subject::BankBillet(billet) => super::charges::owner(conn, &billet.id.to_string()).await?,
    };
    let Some((workspace_id, billing_id, user)) = owner else { return Ok(Applied::Unknown) };
    let first = sql::query(
        "INSERT INTO gateway_events (event_id, received_at) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING",
    )
    .bind(event.id.to_string())
    .bind(Timestamp::now().to_string())
    .execute(&mut *conn)
    .await?;
    if first == 0 {
        return Ok(Applied::Ignored);
    }
    // The operations the event runs read the workspace's id, never its name.
    let ws = Membership { workspace_id, workspace_name: String::new(), role: Role::Finance };
    let identity = system_identity(user);
    let memberships = std::slice::from_ref(&ws);
    let ctx = OpContext { state: *services, identity: &identity, channel: Channel::System, memberships };
    let changed = match &subject {
        Subject::Payment(payment) => super::dispatch::mirror(&ctx, conn, &ws, &billing_id, payment).await?,
        Subject::Pix(charge) => {
            super::charges::mirror(&ctx, conn, &ws, &billing_id, &super::charges::Snapshot::of_pix(charge)).await?
        }
        Subject::BankBillet(billet) => {
            super::charges::mirror(&ctx, conn, &ws, &billing_id, &super::charges::Snapshot::of_billet(billet)).await?
        }
    };
    Ok(if changed { Applied::Changed } else { Applied::Ignored })
}
