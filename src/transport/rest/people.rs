//! `/v1/people` routes: the record shapes of the declaration, and the id sweep.

use axum::response::Response;
use axum::routing::get;
use axum::Router;

use super::{door, records, Caller, Query, QueryPairs};
use crate::app::AppState;
use crate::ops::crud;
use crate::ops::list::ListRequest;
use crate::ops::people::{self, People};

pub fn routes() -> Router<AppState> {
    records::routes::<People>(&people::OPERATIONS, vec![("ids".into(), get(ids))])
}

/// `GET /v1/people/ids`: the id sweep.
async fn ids(QueryPairs(query): Query, caller: Caller) -> Response {
    door::read(&caller, async |ctx, conn, ws| {
        crud::ids::<People>(ctx, conn, ws, &ListRequest::from_query(&query)?).await
    })
    .await
}
