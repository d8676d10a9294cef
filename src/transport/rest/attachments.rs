//! `/v1/attachments` routes: list, upload (`multipart/form-data`), get, delete,
//! download and links.
//!
//! The upload route reads its body itself, after the caller is known to be allowed to
//! upload: up to [`MAX_UPLOAD_BODY`] (a 10 MB file plus the multipart framing), beyond
//! which the answer is 422 `too_large` in the REST envelope and the connection closes.
//! The other routes take JSON bodies under the extractors' default limit.
//!
//! No database connection is held while the blob store is called: an upload puts its
//! bytes before its transaction opens, a download reads its row and gives the
//! connection back before fetching the bytes, and a delete's object is removed after
//! the delete has committed.

use axum::body::Body;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use http::{header, HeaderMap, HeaderValue};

use super::{body_json, created, door, error_response, Caller, Location, Query, QueryPairs, RecordId, WithBody};
use crate::app::AppState;
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::ops::{attachments, machinery::idempotency, machinery::validate};
use crate::transport::body::{self, BodyError};
use crate::transport::multipart;

/// The largest upload request body: 11 MiB, room for a 10 MB file and its framing.
pub const MAX_UPLOAD_BODY: usize = 11 * 1024 * 1024;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/attachments", get(list).post(upload))
        .route("/v1/attachments/{id}", get(get_one).delete(delete))
        .route("/v1/attachments/{id}/download", get(download))
        .route("/v1/attachments/{id}/links", post(link).delete(unlink))
}

/// `GET /v1/attachments`
async fn list(QueryPairs(query): Query, caller: Caller) -> Response {
    door::list(&caller, &query, async |ctx, conn, ws, request| attachments::list(ctx, conn, ws, request).await).await
}

/// `GET /v1/attachments/{id}`
async fn get_one(RecordId(id): RecordId, QueryPairs(query): Query, caller: Caller) -> Response {
    door::get(&caller, &query, async |ctx, conn, ws| attachments::get(ctx, conn, ws, &id).await).await
}

fn close_connection(mut answer: Response) -> Response {
    answer.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    answer
}

/// Answers a request refused before its body was read: a body within the cap is read
/// to its end first, so a kept-alive connection stays in sync; a larger one is not,
/// and the connection is closed.
async fn refuse_unread(answer: Response, headers: &HeaderMap, body: Body) -> Response {
    if body::declared_length(headers).is_some_and(|n| n > MAX_UPLOAD_BODY as u64) {
        return close_connection(answer);
    }
    match body::drain(body, MAX_UPLOAD_BODY).await {
        Ok(()) => answer,
        Err(_) => close_connection(answer),
    }
}

/// `POST /v1/attachments` (`multipart/form-data`; not idempotent). The caller is
/// extracted before the body is read; a refused one is answered as [`refuse_unread`] says.
async fn upload(headers: HeaderMap, caller: Result<Caller, Response>, body: Body) -> Response {
    let caller = match caller {
        Ok(c) => c,
        Err(answer) => return refuse_unread(answer, &headers, body).await,
    };
    let ctx = caller.ctx();
    // Who may upload is known before the body is read (the operation checks again).
    let ws =
        match caller.workspace().and_then(|ws| ctx.authorize(ws, Resource::Attachments, Access::Write).map(|()| ws)) {
            Ok(ws) => ws,
            Err(e) => return refuse_unread(error_response(&e), &headers, body).await,
        };
    if body::declared_length(&headers).is_some_and(|n| n > MAX_UPLOAD_BODY as u64) {
        return close_connection(error_response(&attachments::too_large()));
    }
    let bytes = match body::read(body, MAX_UPLOAD_BODY).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => return close_connection(error_response(&attachments::too_large())),
        Err(BodyError::Broken) => {
            return close_connection(error_response(&ApiError::bad_request("The request body could not be read")))
        }
    };
    let outcome = async {
        let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        let input = multipart::read_upload(content_type, bytes).await?;
        let checked = attachments::check_upload(&ctx, ws, input)?;
        // The bytes first, the row after: see `attachments::record_upload`.
        let placement = attachments::put_bytes(&ctx, ws, &checked).await?;
        let mut tx = caller.state().db.begin().await?;
        let attachment = attachments::record_upload(&ctx, &mut tx, ws, checked, placement).await?;
        tx.commit().await?;
        serde_json::to_value(&attachment).map_err(|_| ApiError::internal())
    }
    .await;
    match outcome {
        Ok(body) => created(&idempotency::Stored { status: 201, body }, Location::Id("/v1/attachments"), false),
        Err(e) => error_response(&e),
    }
}

/// `DELETE /v1/attachments/{id}` → 204; an object in the blob store is removed after
/// the delete has committed.
async fn delete(RecordId(id): RecordId, caller: Caller) -> Response {
    let answer = door::remove(&caller, async |ctx, conn, ws| attachments::delete(ctx, conn, ws, &id).await).await;
    if answer.status().is_success() {
        caller.state().remove_deleted_blobs_soon();
    }
    answer
}

/// `Content-Disposition` for a download: `inline` for PDF and images, `attachment`
/// otherwise. The quoted `filename` is an ASCII rendering (quotes, backslashes,
/// controls and non-ASCII characters become `_`); when that loses anything, the exact
/// name follows as RFC 5987 `filename*`.
pub fn content_disposition(file_name: &str, mime_type: &str) -> String {
    let kind =
        if matches!(mime_type, "application/pdf" | "image/png" | "image/jpeg") { "inline" } else { "attachment" };
    let fallback: String = file_name
        .chars()
        .map(|c| if c.is_ascii() && !c.is_ascii_control() && c != '"' && c != '\\' { c } else { '_' })
        .collect();
    let mut value = format!("{kind}; filename=\"{fallback}\"");
    if fallback != file_name {
        value.push_str("; filename*=UTF-8''");
        for byte in file_name.bytes() {
            if byte.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&byte) {
                value.push(byte as char);
            } else {
                value.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    value
}

/// `GET /v1/attachments/{id}/download`: the bytes, never cached.
async fn download(RecordId(id): RecordId, caller: Caller) -> Response {
    let ctx = caller.ctx();
    let outcome = async {
        let ws = caller.workspace()?;
        let mut conn = caller.connection().await?;
        let located = attachments::locate(&ctx, &mut conn, ws, &id).await?;
        drop(conn);
        attachments::fetch(&ctx, located).await
    }
    .await;
    let file = match outcome {
        Ok(file) => file,
        Err(e) => return error_response(&e),
    };
    let disposition = content_disposition(&file.file_name, &file.mime_type);
    let content_type =
        HeaderValue::from_str(&file.mime_type).unwrap_or(HeaderValue::from_static("application/octet-stream"));
    let length = file.content.len();
    let mut answer = Response::new(Body::from(file.content));
    let headers = answer.headers_mut();
    headers.insert(header::CONTENT_TYPE, content_type);
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&disposition).unwrap_or(HeaderValue::from_static("attachment")),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    answer
}

/// `POST /v1/attachments/{id}/links` → 201 `{attachment_id, parent_type, parent_id}`
/// (idempotent with a key).
async fn link(headers: HeaderMap, RecordId(id): RecordId, WithBody(caller, body): WithBody) -> Response {
    let route = format!("/v1/attachments/{id}/links");
    door::create_keyed(
        &caller,
        (Resource::Attachments, Access::Write),
        &headers,
        &route,
        Location::None,
        &body,
        async |ctx, conn, ws, input: attachments::LinkRequest| attachments::link(ctx, conn, ws, &id, input).await,
    )
    .await
}

/// `DELETE /v1/attachments/{id}/links` → 204
async fn unlink(RecordId(id): RecordId, WithBody(caller, body): WithBody) -> Response {
    door::remove(&caller, async |ctx, conn, ws| {
        // The caller's permission before the body, as every write of the REST door.
        ctx.authorize(ws, Resource::Attachments, Access::Write)?;
        let input = body_json(&body).and_then(validate::parse::<attachments::LinkRequest>)?;
        attachments::unlink(ctx, conn, ws, &id, input).await
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::content_disposition;

    #[test]
    fn content_disposition_quotes_safely_and_adds_the_utf8_name() {
        assert_eq!(content_disposition("nota.pdf", "application/pdf"), "inline; filename=\"nota.pdf\"");
        assert_eq!(content_disposition("extrato.csv", "text/csv"), "attachment; filename=\"extrato.csv\"");
        assert_eq!(
            content_disposition("a\"b\\c.png", "image/png"),
            "inline; filename=\"a_b_c.png\"; filename*=UTF-8''a%22b%5Cc.png"
        );
        assert_eq!(
            content_disposition(
                "relatório final.xlsx",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            ),
            "attachment; filename=\"relat_rio final.xlsx\"; filename*=UTF-8''relat%C3%B3rio%20final.xlsx"
        );
    }
}
