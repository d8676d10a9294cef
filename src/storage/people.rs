//! People on a deployment (migration 0022): workspaces created with their first owner's
//! invitation, invitations claimed at sign-in, a person bound to their identity
//! provider's `iss` + `sub`, members whose role changes or who are removed. Each
//! function that writes runs in the caller's transaction; the rules of who may ask for
//! it are the operations' (`ops::members`), those that hold whoever asks — a workspace
//! keeps an owner, a subject is one person — are here.

use crate::domain::dates::Timestamp;
use crate::domain::roles::Role;
use crate::storage::{sql, Conn, Db, Error};

/// How long an invitation waits for its person.
pub const INVITATION_SECONDS: i64 = 7 * 24 * 3600;

/// An invitation of an e-mail address to a workspace, with a role.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Invitation {
    pub id: String,
    pub workspace_id: String,
    pub email: String,
    pub role: &'static str,
    pub invited_by: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
    pub accepted_at: Option<i64>,
    pub accepted_by: Option<String>,
    pub revoked_at: Option<i64>,
}

impl Invitation {
    /// `pending`, `accepted`, `withdrawn` or `expired` at `now`.
    pub fn status(&self, now: i64) -> &'static str {
        match (self.accepted_at, self.revoked_at) {
            (Some(_), _) => "accepted",
            (None, Some(_)) => "withdrawn",
            (None, None) if self.expires_at <= now => "expired",
            (None, None) => "pending",
        }
    }
}

const INVITATION: &str = "SELECT id, workspace_id, email, role, invited_by, created_at, expires_at, accepted_at, \
                          accepted_by, revoked_at FROM invitations";

/// A stored role's name (one the code no longer knows reads as the least, viewer).
fn role_named(stored: &str) -> &'static str {
    Role::parse(stored).map_or("viewer", Role::as_str)
}

fn invitation_of(row: &sql::Row<'_>) -> Result<Invitation, Error> {
    let role: String = row.try_get(3)?;
    Ok(Invitation {
        id: row.try_get(0)?,
        workspace_id: row.try_get(1)?,
        email: row.try_get(2)?,
        role: role_named(&role),
        invited_by: row.try_get(4)?,
        created_at: row.try_get(5)?,
        expires_at: row.try_get(6)?,
        accepted_at: row.try_get(7)?,
        accepted_by: row.try_get(8)?,
        revoked_at: row.try_get(9)?,
    })
}

/// A workspace created with the invitation of its first owner.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Created {
    pub workspace_id: String,
    pub name: String,
    pub owner_invitation: Invitation,
}

/// Creates a workspace named `name` and invites `owner_email` (normalized) as its owner.
pub async fn create_workspace(conn: &mut Conn, name: &str, owner_email: &str, now: i64) -> Result<Created, Error> {
    let workspace_id = uuid::Uuid::new_v4().to_string();
    sql::query("INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)")
        .bind(&workspace_id)
        .bind(name)
        .bind(crate::clock::now_rfc3339())
        .execute(&mut *conn)
        .await?;
    let owner = NewInvitation { workspace_id: &workspace_id, email: owner_email, role: Role::Owner, invited_by: None };
    let owner_invitation = insert_invitation(conn, owner, now).await?;
    Ok(Created { workspace_id, name: name.to_string(), owner_invitation })
}

/// Whether the workspace exists; its name.
pub async fn workspace_name(conn: &mut Conn, workspace_id: &str) -> Result<Option<String>, Error> {
    sql::query("SELECT name FROM workspaces WHERE id = $1")
        .bind(workspace_id)
        .map_optional(conn, |r| r.try_get(0))
        .await
}

/// An invitation to make: `email` (normalized) to the workspace with `role`, sent by
/// `invited_by` (none: by the operator or at the workspace's creation).
#[derive(Debug, Clone, Copy)]
pub struct NewInvitation<'a> {
    pub workspace_id: &'a str,
    pub email: &'a str,
    pub role: Role,
    pub invited_by: Option<&'a str>,
}

async fn insert_invitation(conn: &mut Conn, new: NewInvitation<'_>, now: i64) -> Result<Invitation, Error> {
    let NewInvitation { workspace_id, email, role, invited_by } = new;
    let invitation = Invitation {
        id: uuid::Uuid::new_v4().to_string(),
        workspace_id: workspace_id.to_string(),
        email: email.to_string(),
        role: role.as_str(),
        invited_by: invited_by.map(str::to_string),
        created_at: now,
        expires_at: now + INVITATION_SECONDS,
        accepted_at: None,
        accepted_by: None,
        revoked_at: None,
    };
    sql::query(
        "INSERT INTO invitations (id, workspace_id, email, role, invited_by, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&invitation.id)
    .bind(workspace_id)
    .bind(email)
    .bind(role.as_str())
    .bind(invited_by)
    .bind(now)
    .bind(invitation.expires_at)
    .execute(conn)
    .await?;
    Ok(invitation)
}

/// What an invitation came to.
#[derive(Debug)]
pub enum Invited {
    /// A new invitation (a pending one of the same address to the workspace withdrawn).
    Sent(Invitation),
    /// The address is already a member's.
    AlreadyMember { user_id: String },
}

/// Invites `email` (normalized) to the workspace with `role`: a pending invitation of
/// the same address there is replaced (its role and expiry renewed).
pub async fn invite(conn: &mut Conn, new: NewInvitation<'_>, now: i64) -> Result<Invited, Error> {
    let NewInvitation { workspace_id, email, .. } = new;
    let member = sql::query(
        "SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id
          WHERE m.workspace_id = $1 AND lower(u.email) = $2",
    )
    .bind(workspace_id)
    .bind(email)
    .map_optional(&mut *conn, |r| r.try_get::<String, _>(0))
    .await?;
    if let Some(user_id) = member {
        return Ok(Invited::AlreadyMember { user_id });
    }
    sql::query(
        "UPDATE invitations SET revoked_at = $1
          WHERE workspace_id = $2 AND email = $3 AND accepted_at IS NULL AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(workspace_id)
    .bind(email)
    .execute(&mut *conn)
    .await?;
    Ok(Invited::Sent(insert_invitation(conn, new, now).await?))
}

/// The workspace's invitations, newest first (the last 200).
pub async fn invitations(conn: &mut Conn, workspace_id: &str) -> Result<Vec<Invitation>, Error> {
    sql::query(format!("{INVITATION} WHERE workspace_id = $1 ORDER BY created_at DESC, id LIMIT 200"))
        .bind(workspace_id)
        .map_all(conn, invitation_of)
        .await
}

/// Withdraws a pending invitation of the workspace; whether there was one.
pub async fn withdraw(conn: &mut Conn, workspace_id: &str, id: &str, now: i64) -> Result<bool, Error> {
    let done = sql::query(
        "UPDATE invitations SET revoked_at = $1
          WHERE id = $2 AND workspace_id = $3 AND accepted_at IS NULL AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(id)
    .bind(workspace_id)
    .execute(conn)
    .await?;
    Ok(done > 0)
}

/// A member of a workspace.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Member {
    pub user_id: String,
    pub name: String,
    pub email: String,
    pub role: &'static str,
    pub since: Timestamp,
}

/// The workspace's members, by name.
pub async fn members(conn: &mut Conn, workspace_id: &str) -> Result<Vec<Member>, Error> {
    sql::query(
        "SELECT u.id, u.name, u.email, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id
          WHERE m.workspace_id = $1 ORDER BY u.name, u.id",
    )
    .bind(workspace_id)
    .map_all(conn, |r| {
        let role: String = r.try_get(3)?;
        Ok(Member {
            user_id: r.try_get(0)?,
            name: r.try_get(1)?,
            email: r.try_get(2)?,
            role: role_named(&role),
            since: r.try_get(4)?,
        })
    })
    .await
}

/// A member's role in the workspace, if they are one.
pub async fn role_of(conn: &mut Conn, workspace_id: &str, user_id: &str) -> Result<Option<Role>, Error> {
    let role = sql::query("SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2")
        .bind(workspace_id)
        .bind(user_id)
        .map_optional(conn, |r| r.try_get::<String, _>(0))
        .await?;
    Ok(role.as_deref().and_then(Role::parse))
}

/// What a change of a membership came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Changed {
    /// Done; the role the member had.
    Done(Role),
    NotMember,
    /// The workspace's only owner may not stop being one.
    LastOwner,
}

async fn owners(conn: &mut Conn, workspace_id: &str) -> Result<i64, Error> {
    sql::query("SELECT COUNT(*) FROM memberships WHERE workspace_id = $1 AND role = 'owner'")
        .bind(workspace_id)
        .map_optional(conn, |r| r.try_get::<i64, _>(0))
        .await
        .map(Option::unwrap_or_default)
}

/// Gives a member another role (`None`: removes them). The memberships' version moves
/// with it (migration 16), so the member's next request, with any token, acts on it.
pub async fn change(conn: &mut Conn, workspace_id: &str, user_id: &str, to: Option<Role>) -> Result<Changed, Error> {
    let Some(was) = role_of(conn, workspace_id, user_id).await? else {
        return Ok(Changed::NotMember);
    };
    if was == Role::Owner && to != Some(Role::Owner) && owners(conn, workspace_id).await? <= 1 {
        return Ok(Changed::LastOwner);
    }
    let statement = match to {
        Some(role) => sql::query("UPDATE memberships SET role = $1 WHERE workspace_id = $2 AND user_id = $3")
            .bind(role.as_str())
            .bind(workspace_id)
            .bind(user_id),
        None => sql::query("DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2")
            .bind(workspace_id)
            .bind(user_id),
    };
    statement.execute(conn).await?;
    Ok(Changed::Done(was))
}

/// Who signed in at an identity provider, as its verified ID token says.
#[derive(Debug, Clone)]
pub struct Signing<'a> {
    pub issuer: &'a str,
    pub subject: &'a str,
    /// The `email` claim, if any.
    pub email: Option<&'a str>,
    /// Whether the provider verified it (`email_verified`).
    pub email_verified: bool,
    /// The `name` claim, if any.
    pub name: Option<&'a str>,
}

/// Why a sign-in lets nobody in; nothing is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The provider did not verify the person's e-mail (or gave none).
    EmailNotVerified,
    /// No invitation names the address.
    NotInvited,
    /// The invitations that named it have expired.
    InvitationExpired,
    /// The invitation that named it was claimed already.
    InvitationUsed,
    /// The address is the account of another subject of this provider.
    AccountBound,
}

/// A person's sign-in: the user bound to the provider's subject — claiming, on the way,
/// the pending invitations of their verified address — or, for a subject not bound yet,
/// the user their invitation creates (or the account their address already names, not
/// bound to this provider). Answers the user id, or why nobody is let in.
pub async fn sign_in(conn: &mut Conn, who: &Signing<'_>, now: i64) -> Result<Result<String, Refused>, Error> {
    let email = who.email.and_then(crate::domain::email::normalized).filter(|_| who.email_verified);
    let bound = sql::query("SELECT user_id FROM identities WHERE issuer = $1 AND subject = $2")
        .bind(who.issuer)
        .bind(who.subject)
        .map_optional(&mut *conn, |r| r.try_get::<String, _>(0))
        .await?;
    let pending = match &email {
        Some(email) => {
            sql::query(format!(
                "{INVITATION} WHERE email = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2
             ORDER BY created_at, id"
            ))
            .bind(email.as_str())
            .bind(now)
            .map_all(&mut *conn, invitation_of)
            .await?
        }
        None => Vec::new(),
    };
    if let Some(user_id) = bound {
        claim(conn, &user_id, &pending, now).await?;
        return Ok(Ok(user_id));
    }
    let Some(email) = email else { return Ok(Err(Refused::EmailNotVerified)) };
    if pending.is_empty() {
        let last = sql::query(format!("{INVITATION} WHERE email = $1 ORDER BY created_at DESC, id LIMIT 1"))
            .bind(email.as_str())
            .map_optional(&mut *conn, invitation_of)
            .await?;
        return Ok(Err(match last.map(|i| i.status(now)) {
            Some("accepted") => Refused::InvitationUsed,
            Some("expired") => Refused::InvitationExpired,
            _ => Refused::NotInvited,
        }));
    }
    let account = sql::query("SELECT id FROM users WHERE lower(email) = $1")
        .bind(email.as_str())
        .map_optional(&mut *conn, |r| r.try_get::<String, _>(0))
        .await?;
    let user_id = match account {
        Some(user_id) => {
            let elsewhere = sql::query("SELECT 1 FROM identities WHERE user_id = $1 AND issuer = $2")
                .bind(&user_id)
                .bind(who.issuer)
                .fetch_optional(&mut *conn)
                .await?;
            if elsewhere.is_some() {
                return Ok(Err(Refused::AccountBound));
            }
            user_id
        }
        None => {
            let user_id = uuid::Uuid::new_v4().to_string();
            let name = who.name.map(str::trim).filter(|n| !n.is_empty()).unwrap_or_else(|| {
                // The address's local part, until the person says more.
                email.split('@').next().unwrap_or_default()
            });
            sql::query("INSERT INTO users (id, email, name, created_at) VALUES ($1, $2, $3, $4)")
                .bind(&user_id)
                .bind(email.as_str())
                .bind(crate::domain::text::one_line(name, 120))
                .bind(crate::clock::now_rfc3339())
                .execute(&mut *conn)
                .await?;
            user_id
        }
    };
    sql::query("INSERT INTO identities (issuer, subject, user_id, created_at) VALUES ($1, $2, $3, $4)")
        .bind(who.issuer)
        .bind(who.subject)
        .bind(&user_id)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    claim(conn, &user_id, &pending, now).await?;
    Ok(Ok(user_id))
}

/// The invitations claimed by the user: a membership of each workspace with its role
/// (a workspace the user is already a member of keeps their role), each marked accepted.
async fn claim(conn: &mut Conn, user_id: &str, invitations: &[Invitation], now: i64) -> Result<(), Error> {
    for invitation in invitations {
        sql::query(
            "INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (workspace_id, user_id) DO NOTHING",
        )
        .bind(&invitation.workspace_id)
        .bind(user_id)
        .bind(invitation.role)
        .bind(crate::clock::now_rfc3339())
        .execute(&mut *conn)
        .await?;
        sql::query("UPDATE invitations SET accepted_at = $1, accepted_by = $2 WHERE id = $3 AND accepted_at IS NULL")
            .bind(now)
            .bind(user_id)
            .bind(&invitation.id)
            .execute(&mut *conn)
            .await?;
        crate::storage::audit::append(
            &mut *conn,
            crate::domain::channel::Channel::System,
            &crate::storage::audit::AuditEvent {
                workspace_id: Some(&invitation.workspace_id),
                user_id: Some(user_id),
                action: "members.joined",
                target_type: Some("invitation"),
                target_id: Some(&invitation.id),
                outcome: "success",
                details: Some(format!("{{\"role\":\"{}\"}}", invitation.role)),
                client_id: None,
            },
        )
        .await?;
    }
    Ok(())
}

/// The person bound to a provider's subject, if any (for the tests and the CLI).
pub async fn bound(db: &Db, issuer: &str, subject: &str) -> Result<Option<String>, Error> {
    sql::query("SELECT user_id FROM identities WHERE issuer = $1 AND subject = $2")
        .bind(issuer)
        .bind(subject)
        .map_optional(db, |r| r.try_get(0))
        .await
}
