//! `POST /v1/webhooks/kobana`: the banking gateway's events. No bearer token: the body
//! is signed with the webhook's secret (`X-Kobana-Signature`, `crate::gateway`), and an
//! event whose signature does not match changes nothing (401). Each event is applied in
//! one transaction, once (`ops/bills/dispatch.rs::apply_event`); an event about a
//! object this server does not know yet, or one a write is recording at the same time,
//! is answered 503 with `Retry-After`, so the gateway delivers it again.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};
use crate::gateway::{Event, SIGNATURE_HEADER};
use crate::ops::bills::events::{apply_event, Applied};

/// The largest event body taken.
pub const MAX_EVENT_BYTES: usize = 256 * 1024;

pub async fn kobana(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    match receive(&state, &headers, &body).await {
        Ok(applied) => Json(json!({ "received": true, "applied": applied == Applied::Changed })).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn receive(state: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<Applied, ApiError> {
    if body.len() > MAX_EVENT_BYTES {
        return Err(ApiError::bad_request("The event is larger than an event may be"));
    }
    let signature = headers.get(SIGNATURE_HEADER).and_then(|v| v.to_str().ok());
    if !state.gateway.verify(body, signature).await {
        return Err(ApiError::new(ErrorCode::InvalidToken, "The event's signature does not match"));
    }
    let event: Event = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("The event is not a payment event: {e}")))?;
    let services = state.services();
    let mut tx = state.db.begin().await?;
    // A write racing this event for the same record (its order being recorded): the
    // gateway delivers the event again.
    let applied = apply_event(&services, &mut tx, &event).await.map_err(|e| match e.code {
        ErrorCode::Conflict => ApiError::unavailable("record this event is about"),
        _ => e,
    })?;
    tx.commit().await?;
    if applied == Applied::Unknown {
        tracing::info!(event = event.id, code = %event.code, "an event about an object not recorded yet");
        return Err(ApiError::unavailable("record this event is about"));
    }
    Ok(applied)
}
