//! `/v1/financial-accounts` routes: the record shapes of the declaration, and the
//! balance adjustment.

use axum::response::Response;
use axum::routing::post;
use axum::Router;
use http::HeaderMap;

use super::{door, records, Location, RecordId, WithBody};
use crate::app::AppState;
use crate::ops::accounts::{self, Accounts, AdjustBalance};

pub fn routes() -> Router<AppState> {
    records::routes::<Accounts>(&accounts::OPERATIONS, vec![("adjust_balance".into(), post(adjust_balance))])
}

/// `POST /v1/financial-accounts/{id}/adjust-balance` (idempotent with a key): 201 with
/// `Location` at the balancing transaction.
async fn adjust_balance(headers: HeaderMap, RecordId(id): RecordId, WithBody(caller, body): WithBody) -> Response {
    let route = format!("/v1/financial-accounts/{id}/adjust-balance");
    let location = Location::Field("/v1/financial-transactions", "transaction_id");
    door::create_keyed(&caller, &headers, &route, location, &body, async |ctx, conn, ws, input: AdjustBalance| {
        accounts::adjust_balance(ctx, conn, ws, &id, input).await
    })
    .await
}
