//! The door step both doors take (SPEC §2 steps 3 and 9, §6, §8): the bearer token
//! verified for the door's surface, the request counted against the caller's budget
//! with the token's revocation checked and the caller's memberships read in the same
//! statement, and the workspace the request names for its connection.
//!
//! What tells the doors apart stays theirs: the MCP endpoint's step order (the body is
//! read between the token and the count) and its count riding on a read
//! ([`admit_or_ride`], [`settle`]); and each door's error envelope. A request turned
//! away here is a [`Turned`], which each door writes in its envelope through
//! [`Turned::answer`]; that adds the headers the contract gives both doors.

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, HeaderValue};

use super::response;
use crate::app::AppState;
use crate::auth::{self, AuthFailure, Identity, Refusal, Surface, WorkspaceHint};
use crate::error::ApiError;
use crate::ops::machinery::rate_limit::{self, Admission, Budget, Counted, Needs, RateStatus, Riding, Settled};
use crate::storage::identity::Membership;
use crate::storage::Held;

/// Why the door step turned a request away.
pub enum Turned {
    /// 401: no token (`None`), or one refused (invalid, expired, for the other door,
    /// revoked).
    Unauthorized(Option<Refusal>),
    /// 429: over budget, with where the caller stands.
    Limited(ApiError, RateStatus),
    /// The signing keys or the database could not be read (503 when unavailable).
    Failed(ApiError),
}

impl From<AuthFailure> for Turned {
    fn from(failure: AuthFailure) -> Turned {
        match failure {
            AuthFailure::Missing => Turned::Unauthorized(None),
            AuthFailure::Refused(why) => Turned::Unauthorized(Some(why)),
            AuthFailure::Unavailable(error) => Turned::Failed(error),
        }
    }
}

impl Turned {
    /// What a 401 tells the holder of a token at `surface`, and what to do.
    pub fn unauthorized_message(refused: Option<Refusal>, surface: Surface) -> &'static str {
        match (refused, surface) {
            (Some(refusal), _) => refusal.description(surface),
            (None, Surface::Mcp) => "Unauthorized: a bearer token is required",
            (None, Surface::Api) => "An API bearer token is required (kobana-finance-mcp token --audience api)",
        }
    }

    /// The door's answer: `envelope` writes the refusal in the door's own envelope,
    /// then the headers both doors send with it — on a 401 the challenge
    /// (`WWW-Authenticate`: the metadata of `resource_path`, and why the token was
    /// refused, told at `surface`), on a 429 `RateLimit-*`.
    pub fn answer(
        self,
        state: &AppState,
        surface: Surface,
        resource_path: &str,
        envelope: impl FnOnce(&Turned) -> Response,
    ) -> Response {
        let mut answer = envelope(&self);
        match self {
            Turned::Unauthorized(refused) => {
                let challenge = auth::challenge(&state.config.public_url, resource_path, refused.map(|r| (r, surface)));
                if let Ok(value) = HeaderValue::from_str(&challenge) {
                    answer.headers_mut().insert(http::header::WWW_AUTHENTICATE, value);
                }
            }
            Turned::Limited(_, status) => response::rate_limit_headers(&mut answer, &status),
            Turned::Failed(_) => {}
        }
        answer
    }
}

/// The bearer token verified for `surface`, without the database: its revocation is
/// checked with the count ([`admit`], [`admit_or_ride`]), or alone ([`check_revocation`])
/// by a request answered before it is counted.
pub async fn authenticate(state: &AppState, headers: &HeaderMap, surface: Surface) -> Result<Identity, Turned> {
    auth::verify(state.verifier(), headers, surface).await.map_err(Turned::from)
}

/// Refuses a revoked token, for a request answered before its count.
pub async fn check_revocation(state: &AppState, identity: &Identity) -> Result<(), Turned> {
    auth::check_revocation(state.verifier(), identity).await.map_err(Turned::from)
}

/// What a counted request read on its way in.
pub struct Entry {
    /// The caller's memberships, when the count was asked to read them.
    pub memberships: Option<Vec<Membership>>,
    /// The connection the count kept for the request's read, if it was asked to.
    pub held: Held,
}

/// Counts the request against `budget` with the token's revocation checked and what it
/// `needs` read in the same statement ([`rate_limit::count_unless_revoked`]).
pub async fn admit(state: &AppState, identity: &Identity, budget: Budget, needs: Needs) -> Result<Entry, Turned> {
    state.upkeep_if_due();
    entered(rate_limit::count_unless_revoked(state.services(), identity, budget, needs).await)
}

/// As [`admit`]; but a read by a caller whose memberships this process knows may be let
/// in with its count riding on its first statement ([`rate_limit::count_or_ride`]): the
/// [`Riding`] count is then [`settle`]d once the answer is computed.
pub async fn admit_or_ride(
    state: &AppState,
    identity: &Identity,
    budget: Budget,
    needs: Needs,
) -> Result<(Entry, Option<Riding>), Turned> {
    state.upkeep_if_due();
    match rate_limit::count_or_ride(state.services(), identity, budget, needs).await {
        Ok(Admission::Riding(memberships, conn, riding)) => {
            Ok((Entry { memberships: Some(memberships), held: Held::new(Some(conn)) }, Some(riding)))
        }
        Ok(Admission::Counted(counted)) => entered(Ok(counted)).map(|entry| (entry, None)),
        Err(error) => Err(Turned::Failed(error)),
    }
}

fn entered(counted: Result<Counted, ApiError>) -> Result<Entry, Turned> {
    match counted {
        Ok(Counted::Allowed(_, memberships, conn)) => Ok(Entry { memberships, held: Held::new(conn) }),
        Ok(Counted::Revoked) => Err(Turned::Unauthorized(Some(Refusal::Revoked))),
        Ok(Counted::Limited(error, status)) => Err(Turned::Limited(error, status)),
        Err(error) => Err(Turned::Failed(error)),
    }
}

/// A riding count's outcome, once the answer is computed on the connection in `held`:
/// `None` when the answer stands, the memberships to compute it again on when they
/// changed, or the refusal the count found.
pub async fn settle(
    state: &AppState,
    identity: &Identity,
    riding: Riding,
    held: &Held,
) -> Result<Option<Vec<Membership>>, Turned> {
    match riding.settle(state.services(), identity, held).await {
        Ok(Settled::Stands) => Ok(None),
        Ok(Settled::Again(memberships)) => Ok(Some(memberships)),
        Ok(Settled::Revoked) => Err(Turned::Unauthorized(Some(Refusal::Revoked))),
        Ok(Settled::Limited(error, status)) => Err(Turned::Limited(error, status)),
        Err(error) => Err(Turned::Failed(error)),
    }
}

/// The workspace the request names for its connection (`X-Workspace-Id`,
/// `?workspace_id=`, form-decoded as the routes' queries are); resolved where a call
/// asks which workspace it acts in.
pub fn workspace_hint(parts: &Parts) -> WorkspaceHint {
    WorkspaceHint::of_request(&parts.headers, url::form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes()))
}
