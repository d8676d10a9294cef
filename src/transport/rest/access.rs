//! Who has access (`ops::access`): `/v1/members`, `/v1/invitations` — in the call's
//! workspace — and `/v1/connected-apps` — the caller's, and in the workspaces they own
//! their people's (`oauth::apps`, the connected apps page's rule).

use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use axum::Router;
use http::{HeaderMap, StatusCode};

use super::{door, no_content, ok_json, Caller, Location, RecordId, WithBody};
use crate::app::AppState;
use crate::domain::channel::Channel;
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::ops::access;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/members", get(members))
        .route("/v1/members/{id}", axum::routing::patch(change_role).delete(remove))
        .route("/v1/invitations", get(invitations).post(invite))
        .route("/v1/invitations/{id}", delete(withdraw))
        .route("/v1/connected-apps", get(connected_apps))
        .route("/v1/connected-apps/{id}", delete(revoke_app))
}

async fn members(caller: Caller) -> Response {
    door::read(&caller, access::members).await
}

async fn invitations(caller: Caller) -> Response {
    door::read(&caller, access::invitations).await
}

/// `POST /v1/invitations` → 201
async fn invite(headers: HeaderMap, WithBody(caller, body): WithBody) -> Response {
    door::create_keyed(
        &caller,
        (Resource::Access, Access::Write),
        &headers,
        "/v1/invitations",
        Location::None,
        &body,
        access::invite,
    )
    .await
}

/// `DELETE /v1/invitations/{id}` → 204
async fn withdraw(RecordId(id): RecordId, caller: Caller) -> Response {
    door::remove(&caller, async |ctx, conn, ws| access::withdraw(ctx, conn, ws, &id).await).await
}

/// `PATCH /v1/members/{user_id}` → 200
async fn change_role(headers: HeaderMap, RecordId(id): RecordId, WithBody(caller, body): WithBody) -> Response {
    let route = format!("/v1/members/{id}");
    door::update(&caller, (Resource::Access, Access::Write), &headers, &route, &body, async |ctx, conn, ws, input| {
        access::change_role(ctx, conn, ws, &id, input).await
    })
    .await
}

/// `DELETE /v1/members/{user_id}` → 204
async fn remove(RecordId(id): RecordId, caller: Caller) -> Response {
    door::remove(&caller, async |ctx, conn, ws| access::remove(ctx, conn, ws, &id).await).await
}

/// The scope a connected-apps call needs (they act in no workspace: the role part of
/// the rule is the list's own, `storage::oauth::visible_grants`).
fn scoped(caller: &Caller, access: Access) -> Result<(), ApiError> {
    let identity = caller.ctx().identity;
    if identity.scopes.allows(Resource::Access, access) {
        return Ok(());
    }
    Err(crate::ops::insufficient_scope(identity, Resource::Access, access))
}

/// `GET /v1/connected-apps`
async fn connected_apps(caller: Caller) -> Response {
    let outcome = async {
        scoped(&caller, Access::Read)?;
        let user = &caller.ctx().identity.user_id;
        let apps = crate::oauth::apps::list(&caller.state().db, user, crate::clock::now_unix()).await?;
        Ok::<_, ApiError>(access::All { data: apps })
    }
    .await;
    match outcome {
        Ok(apps) => ok_json(StatusCode::OK, &apps),
        Err(e) => e.into_response(),
    }
}

/// `DELETE /v1/connected-apps/{id}` → 204: the app's grant revoked.
async fn revoke_app(RecordId(id): RecordId, caller: Caller) -> Response {
    let outcome = async {
        scoped(&caller, Access::Write)?;
        let ctx = caller.ctx();
        let revoked = crate::oauth::apps::revoke(
            &caller.state().db,
            &ctx.identity.user_id,
            &id,
            Channel::Api,
            ctx.identity.client_id.as_deref(),
        )
        .await?;
        if revoked {
            Ok(())
        } else {
            Err(ApiError::not_found("Connected app"))
        }
    }
    .await;
    match outcome {
        Ok(()) => no_content(),
        Err(e) => e.into_response(),
    }
}
