//! `/v1/financial-transactions` and `/v1/transfers` routes: the record shapes of the
//! transactions' declaration, and the operations of their own.

use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use http::HeaderMap;

use super::{door, records, Caller, Location, Query, QueryPairs, RecordId, WithBody};
use crate::app::AppState;
use crate::ops::list::ListRequest;
use crate::ops::transactions::declared::{self as transactions_ops, Transactions};
use crate::ops::transactions::{self, TransferCreate};

pub fn routes() -> Router<AppState> {
    let transactions = records::routes::<Transactions>(
        &transactions_ops::TRANSACTIONS,
        vec![("aggregates".into(), get(aggregates)), ("ids".into(), get(ids))],
    );
    let transfers = records::own(
        &transactions_ops::TRANSFERS,
        vec![("create".into(), post(create_transfer)), ("get".into(), get(get_transfer))],
    );
    transactions.merge(transfers)
}

/// `GET /v1/financial-transactions/aggregates`
async fn aggregates(QueryPairs(query): Query, caller: Caller) -> Response {
    door::read(&caller, async |ctx, conn, ws| transactions::aggregates(ctx, conn, ws, &query).await).await
}

/// `GET /v1/financial-transactions/ids`: the id sweep.
async fn ids(QueryPairs(query): Query, caller: Caller) -> Response {
    door::read(&caller, async |ctx, conn, ws| transactions::ids(ctx, conn, ws, &ListRequest::from_query(&query)?).await)
        .await
}

/// `POST /v1/transfers` (idempotent with a key): 201 with `Location` at the transfer.
async fn create_transfer(headers: HeaderMap, WithBody(caller, body): WithBody) -> Response {
    let location = Location::Field("/v1/transfers", "transfer_id");
    door::create_keyed(
        &caller,
        &headers,
        "/v1/transfers",
        location,
        &body,
        async |ctx, conn, ws, input: TransferCreate| transactions::create_transfer(ctx, conn, ws, input).await,
    )
    .await
}

/// `GET /v1/transfers/{transfer_id}`
async fn get_transfer(RecordId(id): RecordId, caller: Caller) -> Response {
    door::read(&caller, async |ctx, conn, ws| transactions::get_transfer(ctx, conn, ws, &id).await).await
}
