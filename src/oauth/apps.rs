//! Connected apps: the clients that hold a grant of a person — their name and host, what
//! they may do, the workspaces they reach, since when and when last used — and the
//! revocation of one. A person sees their own; an owner also sees those of the people
//! of each workspace they own (`storage::oauth::visible_grants`, the one rule), on a
//! page behind the same sign-in as the consent (`/oauth/apps`), on `/v1/connected-apps`
//! and in the CLI. Revoking ends the grant's refresh tokens at once and its access
//! tokens on their next request, and is audited.

use serde::Serialize;

use super::authorize::Outcome;
use super::clients::host_of;
use super::identity::{self, param, Params, Step};
use super::pages::{self, AppLine, Apps, Lang};
use super::session::Session;
use super::{Oauth, OauthError};
use crate::domain::channel::Channel;
use crate::storage::audit::{self, AuditEvent};
use crate::storage::oauth::{self as store, SeenGrant};
use crate::storage::{Db, Error};

/// The page.
pub const PATH: &str = "/oauth/apps";

/// What a sign-in begun for the page carries instead of an authorization request (and a
/// random part, so the sign-in's form is this sign-in's).
pub const RESUME: &str = "apps:";

/// Whether a completed sign-in was for the page.
pub fn resumes_apps(request: &str) -> bool {
    request.starts_with(RESUME)
}

/// A connected app, as `/v1/connected-apps` and the CLI answer it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ConnectedApp {
    /// The grant's id (the `gid` claim of the app's tokens).
    pub id: String,
    pub client_id: String,
    pub client_name: Option<String>,
    /// The host the app is known by: its document's, else its redirect URI's.
    pub client_host: String,
    /// The scopes granted, space-separated.
    pub scope: String,
    /// The resource its tokens are for (the MCP server or the REST API).
    pub resource: String,
    /// The person it acts for.
    pub user_id: String,
    pub user_name: String,
    /// Whether it acts for the caller (else for a person of a workspace the caller owns).
    pub mine: bool,
    /// The workspaces it reaches, of those the caller may see.
    pub workspaces: Vec<String>,
    pub created_at: String,
    /// The last time it was given tokens (a sign-in or a refresh, about hourly).
    pub last_used_at: String,
}

fn client_host(seen: &SeenGrant) -> String {
    let grant = &seen.grant;
    if grant.client_id.starts_with("https://") {
        return host_of(&grant.client_id).unwrap_or_else(|| grant.client_id.clone());
    }
    seen.redirect_uris
        .as_deref()
        .and_then(|json| serde_json::from_str::<Vec<String>>(json).ok())
        .and_then(|uris| uris.first().and_then(|u| host_of(u)))
        .unwrap_or_else(|| "—".into())
}

/// The apps `user_id` sees, alive at `now`.
pub async fn list(db: &Db, user_id: &str, now: i64) -> Result<Vec<ConnectedApp>, Error> {
    let mut conn = db.acquire().await?;
    let seen = store::visible_grants(&mut conn, user_id, None, now).await?;
    drop(conn);
    let own = crate::storage::identity::memberships(db, user_id).await?;
    let owned: Vec<&str> =
        own.iter().filter(|m| m.role == crate::domain::roles::Role::Owner).map(|m| m.workspace_id.as_str()).collect();
    let mut apps = Vec::with_capacity(seen.len());
    for seen in seen {
        let mine = seen.grant.user_id == user_id;
        let theirs =
            if mine { own.clone() } else { crate::storage::identity::memberships(db, &seen.grant.user_id).await? };
        let workspaces = theirs
            .into_iter()
            .filter(|m| mine || owned.contains(&m.workspace_id.as_str()))
            .map(|m| m.workspace_name)
            .collect();
        apps.push(ConnectedApp {
            client_host: client_host(&seen),
            id: seen.grant.id,
            client_id: seen.grant.client_id,
            client_name: seen.grant.client_name,
            scope: seen.grant.scope,
            resource: seen.grant.resource,
            user_id: seen.grant.user_id,
            user_name: seen.user_name,
            mine,
            workspaces,
            created_at: crate::clock::rfc3339(seen.grant.created_at),
            last_used_at: crate::clock::rfc3339(seen.grant.used_at.unwrap_or(seen.grant.created_at)),
        });
    }
    Ok(apps)
}

/// Revokes the grant `grant_id` if `user_id` may see it: answers whether it did. The
/// audit records who revoked whose app, through which door (`client_id`: the app the
/// revocation itself came through, if any).
pub async fn revoke(
    db: &Db,
    user_id: &str,
    grant_id: &str,
    channel: Channel,
    client_id: Option<&str>,
) -> Result<bool, Error> {
    let now = crate::clock::now_unix();
    let mut tx = db.begin().await?;
    let Some(seen) = store::visible_grants(&mut tx, user_id, Some(grant_id), now).await?.into_iter().next() else {
        return Ok(false);
    };
    store::revoke_grant(&mut tx, grant_id, now).await?;
    let details = serde_json::json!({"client_id": seen.grant.client_id, "client_name": seen.grant.client_name,
                                     "holder": seen.grant.user_id});
    audit::append(
        &mut tx,
        channel,
        &AuditEvent {
            workspace_id: None,
            user_id: Some(user_id),
            action: "apps.revoked",
            target_type: Some("grant"),
            target_id: Some(grant_id),
            outcome: "success",
            details: Some(details.to_string()),
            client_id,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(true)
}

fn line(app: ConnectedApp, session: &Session, key: &[u8], lang: Lang) -> AppLine {
    let day = |at: &str| at.get(..10).unwrap_or(at).to_string();
    AppLine {
        csrf: session.csrf(key, &format!("{RESUME}{}", app.id)),
        client_name: app.client_name.unwrap_or_else(|| app.client_host.clone()),
        person: app.user_name,
        created: day(&app.created_at),
        used: day(&app.last_used_at),
        scopes: pages::scope_lines(&app.scope, lang),
        workspaces: app.workspaces.join(", "),
        client_host: app.client_host,
        grant_id: app.id,
    }
}

fn error_page(lang: Lang, error: &OauthError) -> Outcome {
    Outcome::Page {
        status: if error.status >= 500 { error.status } else { 400 },
        html: pages::error(lang, &error.description),
    }
}

/// `GET /oauth/apps`: the page of the signed-in person, or the sign-in that leads to
/// it. `revoked`: the page follows a revocation.
pub async fn page(oauth: Oauth<'_>, cookie: Option<&str>, lang: Lang, revoked: bool) -> (Outcome, Option<String>) {
    let keys = match oauth.keys.current().await {
        Ok(keys) => keys,
        Err(_) => return (error_page(lang, &OauthError::unavailable()), None),
    };
    let now = crate::clock::now_unix();
    let Some(session) = Session::of(cookie, &keys.state, now) else {
        let Some(source) = identity::source(oauth) else {
            let error = OauthError::new("access_denied", "Sign-in is not configured on this server");
            return (error_page(lang, &error), None);
        };
        let resume = format!("{RESUME}{}", super::random_value());
        return match source.begin(oauth, &resume, lang).await {
            Ok(Step::Page(html)) => (Outcome::Page { status: 200, html }, None),
            Ok(Step::Redirect { to, cookie }) => (Outcome::Redirect(to), cookie),
            Err(e) => (error_page(lang, &e), None),
        };
    };
    let person = match store::person(oauth.db, &session.sub).await {
        Ok(Some((name, email))) => format!("{name} <{email}>"),
        Ok(None) => {
            return (error_page(lang, &OauthError::new("access_denied", "The person signed in no longer exists")), None)
        }
        Err(e) => return (error_page(lang, &OauthError::from(e)), None),
    };
    let apps = match list(oauth.db, &session.sub, now).await {
        Ok(apps) => apps,
        Err(e) => return (error_page(lang, &OauthError::from(e)), None),
    };
    let (mine, others): (Vec<_>, Vec<_>) = apps.into_iter().partition(|a| a.mine);
    let html = pages::render(&Apps {
        t: lang.texts(),
        lang: lang.tag(),
        person: &person,
        notice: if revoked { lang.texts().apps_revoked } else { "" },
        mine: mine.into_iter().map(|a| line(a, &session, &keys.state, lang)).collect(),
        others: others.into_iter().map(|a| line(a, &session, &keys.state, lang)).collect(),
        action: PATH,
    });
    (Outcome::Page { status: 200, html }, None)
}

/// `POST /oauth/apps`: a revocation from the page (`grant`, `csrf`), in the session that
/// was shown it; back to the page.
pub async fn revoke_form(oauth: Oauth<'_>, form: &Params, cookie: Option<&str>, lang: Lang) -> Outcome {
    let keys = match oauth.keys.current().await {
        Ok(keys) => keys,
        Err(_) => return error_page(lang, &OauthError::unavailable()),
    };
    let grant = param(form, "grant").unwrap_or_default();
    let csrf = param(form, "csrf").unwrap_or_default();
    let session = Session::of(cookie, &keys.state, crate::clock::now_unix())
        .filter(|s| !grant.is_empty() && s.checks(&keys.state, &format!("{RESUME}{grant}"), csrf));
    let Some(session) = session else {
        let error =
            OauthError::new("invalid_request", "This answer does not come from the page this session was shown (CSRF)")
                .with_status(403);
        return Outcome::Page { status: 403, html: pages::error(lang, &error.description) };
    };
    match revoke(oauth.db, &session.sub, grant, Channel::System, None).await {
        Ok(_) => Outcome::Redirect(format!("{PATH}?revoked=1")),
        Err(e) => error_page(lang, &OauthError::from(e)),
    }
}
