//! Who has access to a workspace (`/v1/members`, `/v1/invitations`; scope
//! `finance.access`, `.write`; this product's own, `x-kobana-extension`): its members and
//! their roles, its invitations. Every member sees them; owners and admins invite,
//! change roles and remove members; only an owner makes or unmakes an owner, and a
//! workspace keeps one (409 `last_owner`). A change of a member's role or membership
//! acts on that person's next request with any token already issued (the memberships'
//! version every request reads). No MCP tool reaches any of it: inviting and changing
//! roles are a person's acts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::machinery::common::audit_write_with;
use super::machinery::openapi::Operation;
use super::machinery::validate::schema_of;
use super::OpContext;
use crate::domain::dates::Timestamp;
use crate::domain::roles::{Access, Resource, Role};
use crate::error::{ApiError, ErrorCode};
use crate::storage::identity::Membership;
use crate::storage::people::{self, Changed, Invitation, Invited, Member};
use crate::storage::Conn;

/// A role a member may have.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RoleName {
    Owner,
    Admin,
    Finance,
    Viewer,
}

impl RoleName {
    fn role(self) -> Role {
        match self {
            RoleName::Owner => Role::Owner,
            RoleName::Admin => Role::Admin,
            RoleName::Finance => Role::Finance,
            RoleName::Viewer => Role::Viewer,
        }
    }
}

/// `POST /v1/invitations`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InviteRequest {
    /// The address the person signs in with at the company's identity provider (verified
    /// there): the invitation is theirs when they first sign in.
    #[schemars(extend("format" = "email"), length(max = 254))]
    pub email: String,
    /// The role they will have here.
    pub role: RoleName,
}

/// `PATCH /v1/members/{user_id}`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleChange {
    pub role: RoleName,
}

/// An invitation as `/v1` answers it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InvitationView {
    pub id: String,
    pub email: String,
    pub role: String,
    /// `pending`, `accepted`, `withdrawn` or `expired`.
    pub status: String,
    pub invited_by: Option<String>,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    pub accepted_by: Option<String>,
}

impl InvitationView {
    pub fn of(invitation: &Invitation, now: i64) -> InvitationView {
        InvitationView {
            id: invitation.id.clone(),
            email: invitation.email.clone(),
            role: invitation.role.to_string(),
            status: invitation.status(now).to_string(),
            invited_by: invitation.invited_by.clone(),
            created_at: Timestamp::from_unix(invitation.created_at),
            expires_at: Timestamp::from_unix(invitation.expires_at),
            accepted_by: invitation.accepted_by.clone(),
        }
    }
}

/// A member as `/v1` answers it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MemberView {
    pub user_id: String,
    pub name: String,
    pub email: String,
    pub role: String,
    pub since: Timestamp,
}

impl From<Member> for MemberView {
    fn from(m: Member) -> MemberView {
        MemberView { user_id: m.user_id, name: m.name, email: m.email, role: m.role.to_string(), since: m.since }
    }
}

/// `{"data": [...]}` of a list that has no pages.
#[derive(Debug, Serialize, JsonSchema)]
pub struct All<T> {
    pub data: Vec<T>,
}

/// `GET /v1/members`
pub async fn members(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership) -> Result<All<MemberView>, ApiError> {
    ctx.authorize(ws, Resource::Access, Access::Read)?;
    let members = people::members(conn, &ws.workspace_id).await?;
    Ok(All { data: members.into_iter().map(MemberView::from).collect() })
}

/// `GET /v1/invitations`: the last 200, newest first.
pub async fn invitations(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
) -> Result<All<InvitationView>, ApiError> {
    ctx.authorize(ws, Resource::Access, Access::Read)?;
    let now = crate::clock::now_unix();
    let invitations = people::invitations(conn, &ws.workspace_id).await?;
    Ok(All { data: invitations.iter().map(|i| InvitationView::of(i, now)).collect() })
}

/// Only an owner makes or unmakes an owner.
fn owners_only(ws: &Membership, touches_owner: bool) -> Result<(), ApiError> {
    if touches_owner && ws.role != Role::Owner {
        return Err(ApiError::forbidden("Only an owner may make someone an owner, or change or remove an owner"));
    }
    Ok(())
}

/// `POST /v1/invitations`: a pending invitation of the same address is replaced.
pub async fn invite(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    input: InviteRequest,
) -> Result<InvitationView, ApiError> {
    ctx.authorize(ws, Resource::Access, Access::Write)?;
    owners_only(ws, input.role == RoleName::Owner)?;
    let email = crate::domain::email::normalized(&input.email).ok_or_else(|| {
        ApiError::unprocessable("Field email must be an e-mail address (name@example.com)")
            .with_details(json!({"field": "email", "reason": "invalid_email"}))
    })?;
    let now = crate::clock::now_unix();
    let new = people::NewInvitation {
        workspace_id: &ws.workspace_id,
        email: &email,
        role: input.role.role(),
        invited_by: Some(&ctx.identity.user_id),
    };
    match people::invite(conn, new, now).await? {
        Invited::Sent(invitation) => {
            let details = json!({"email": email, "role": invitation.role});
            audit_write_with(ctx, conn, ws, ("members.invited", "invitation", &invitation.id), Some(details)).await?;
            Ok(InvitationView::of(&invitation, now))
        }
        Invited::AlreadyMember { user_id } => Err(ApiError::new(
            ErrorCode::Conflict,
            format!("{email} is already a member of this workspace: change their role instead"),
        )
        .with_details(json!({"reason": "already_member", "user_id": user_id}))),
    }
}

/// `DELETE /v1/invitations/{id}`: a pending invitation withdrawn.
pub async fn withdraw(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
    ctx.authorize(ws, Resource::Access, Access::Write)?;
    let id = super::machinery::common::path_id(id, "Invitation")?;
    if !people::withdraw(conn, &ws.workspace_id, &id, crate::clock::now_unix()).await? {
        return Err(ApiError::not_found("Pending invitation"));
    }
    audit_write_with(ctx, conn, ws, ("members.invitation_withdrawn", "invitation", &id), None).await
}

fn changed(outcome: Changed) -> Result<Role, ApiError> {
    match outcome {
        Changed::Done(was) => Ok(was),
        Changed::NotMember => Err(ApiError::not_found("Member")),
        Changed::LastOwner => Err(ApiError::new(
            ErrorCode::Conflict,
            "The workspace's only owner must stay one: make another member an owner first",
        )
        .with_details(json!({"reason": "last_owner"}))),
    }
}

/// `PATCH /v1/members/{user_id}`: the member's role.
pub async fn change_role(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    user_id: &str,
    input: RoleChange,
) -> Result<MemberView, ApiError> {
    ctx.authorize(ws, Resource::Access, Access::Write)?;
    let user_id = super::machinery::common::path_id(user_id, "Member")?;
    let current =
        people::role_of(conn, &ws.workspace_id, &user_id).await?.ok_or_else(|| ApiError::not_found("Member"))?;
    owners_only(ws, current == Role::Owner || input.role == RoleName::Owner)?;
    let was = changed(people::change(conn, &ws.workspace_id, &user_id, Some(input.role.role())).await?)?;
    let details = json!({"from": was.as_str(), "to": input.role.role().as_str()});
    audit_write_with(ctx, conn, ws, ("members.role_changed", "user", &user_id), Some(details)).await?;
    people::members(conn, &ws.workspace_id)
        .await?
        .into_iter()
        .find(|m| m.user_id == user_id)
        .map(MemberView::from)
        .ok_or_else(|| ApiError::not_found("Member"))
}

/// `DELETE /v1/members/{user_id}`: the member removed from the workspace (their account
/// and their other workspaces stay).
pub async fn remove(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, user_id: &str) -> Result<(), ApiError> {
    ctx.authorize(ws, Resource::Access, Access::Delete)?;
    let user_id = super::machinery::common::path_id(user_id, "Member")?;
    let current =
        people::role_of(conn, &ws.workspace_id, &user_id).await?.ok_or_else(|| ApiError::not_found("Member"))?;
    owners_only(ws, current == Role::Owner)?;
    let was = changed(people::change(conn, &ws.workspace_id, &user_id, None).await?)?;
    audit_write_with(ctx, conn, ws, ("members.removed", "user", &user_id), Some(json!({"role": was.as_str()}))).await
}

/// A schema, built when the OpenAPI document is.
type SchemaFn = fn() -> serde_json::Value;

const fn doc(
    method: &'static str,
    path: &'static str,
    id: &'static str,
    summary: &'static str,
    scope: &'static str,
    (request, success, response): (Option<SchemaFn>, u16, Option<SchemaFn>),
) -> Operation {
    Operation { method, path, id, summary, scope, request, success, response, list: None, id_filters: &[] }
}

/// The routes of who has access, for the OpenAPI document.
pub const DOCS: &[Operation] = &[
    doc(
        "get",
        "/v1/members",
        "members_list",
        "List the workspace's members and their roles",
        "finance.access",
        (None, 200, Some(schema_of::<All<MemberView>>)),
    ),
    doc(
        "patch",
        "/v1/members/{id}",
        "members_update",
        "Change a member's role (only an owner makes or unmakes an owner; \
the workspace keeps one)",
        "finance.access.write",
        (Some(schema_of::<RoleChange>), 200, Some(schema_of::<MemberView>)),
    ),
    doc(
        "delete",
        "/v1/members/{id}",
        "members_delete",
        "Remove a member from the workspace",
        "finance.access.write",
        (None, 204, None),
    ),
    doc(
        "get",
        "/v1/invitations",
        "invitations_list",
        "List the workspace's invitations (the last 200)",
        "finance.access",
        (None, 200, Some(schema_of::<All<InvitationView>>)),
    ),
    doc(
        "post",
        "/v1/invitations",
        "invitations_create",
        "Invite an e-mail address with a role: the person joins when \
they first sign in with it, verified by the company's identity provider (7 days)",
        "finance.access.write",
        (Some(schema_of::<InviteRequest>), 201, Some(schema_of::<InvitationView>)),
    ),
    doc(
        "delete",
        "/v1/invitations/{id}",
        "invitations_delete",
        "Withdraw a pending invitation",
        "finance.access.write",
        (None, 204, None),
    ),
    doc(
        "get",
        "/v1/connected-apps",
        "connected_apps_list",
        "List the apps that act for the caller and, in the \
workspaces the caller owns, for its people",
        "finance.access",
        (None, 200, Some(schema_of::<All<crate::oauth::apps::ConnectedApp>>)),
    ),
    doc(
        "delete",
        "/v1/connected-apps/{id}",
        "connected_apps_delete",
        "Revoke an app: its refresh tokens at once, its \
access tokens on their next request",
        "finance.access.write",
        (None, 204, None),
    ),
];
