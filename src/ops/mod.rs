//! Operations: one function per `/v1` operation. The REST routes and the MCP tools are
//! two thin doors onto these functions; scope, role and workspace isolation are
//! checked here, inside the operation, whichever door the call came through. So is
//! what both doors share beyond one operation: idempotency keys ([`idempotency::run`]),
//! rate limits, id completion. SQL lives here and in `storage`, never in a door.

pub mod access;
pub mod accounts;
pub mod apportionment;
pub mod attachments;
pub mod automatic_rules;
pub mod banks;
pub mod bills;
pub mod cash_flow;
pub mod categories;
pub mod companies;
pub mod cost_centers;
pub mod ledger;
pub mod machinery;
pub mod people;
pub mod receipts;
pub mod reconciliations;
pub mod registers;
pub mod registry;
pub mod reports;
pub mod statement_imports;
pub mod suggestions;
pub mod taxes;
pub mod transactions;
pub mod workspaces;

use crate::auth::keys::KeyStore;
use crate::auth::Identity;
use crate::config::Config;
use crate::domain::roles::{permission, Access, Refusal, Resource, Role, ScopeSet};
use crate::error::ApiError;
use crate::storage::blob::BlobStore;
use crate::storage::identity::Membership;
use crate::storage::Db;

pub use crate::domain::channel::Channel;

/// A page of a list: `{"data":[…],"meta":{"next_cursor":…}}`.
#[derive(Debug, serde::Serialize)]
pub struct Page<T> {
    pub data: Vec<T>,
    pub meta: PageMeta,
}

#[derive(Debug, serde::Serialize)]
pub struct PageMeta {
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    pub fn new(data: Vec<T>, next_cursor: Option<String>) -> Self {
        Page { data, meta: PageMeta { next_cursor } }
    }
}

/// `{data: [uuid…], meta: {next_cursor}}`: a page of the id sweep of a resource.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct IdPage {
    pub data: Vec<String>,
    pub meta: IdPageMeta,
}

#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct IdPageMeta {
    pub next_cursor: Option<String>,
}

/// What the operations use of the application: its configuration, the database, the
/// signing keys (list cursors) and the attachment blob store. The doors lend them from
/// the application state, which the operations never see whole.
#[derive(Clone, Copy)]
pub struct Services<'a> {
    pub config: &'a Config,
    pub db: &'a Db,
    pub keys: &'a KeyStore,
    pub blobs: &'a BlobStore,
    pub gateway: &'a crate::gateway::Gateway,
}

/// Everything an operation needs to know about its caller.
pub struct OpContext<'a> {
    pub state: Services<'a>,
    pub identity: &'a Identity,
    pub channel: Channel,
    /// The caller's memberships, loaded once per request by the door.
    pub memberships: &'a [Membership],
}

impl<'a> OpContext<'a> {
    /// Resolves the workspace of a call (SPEC §6): the explicit one (tool argument),
    /// else the connection default (header or query), else the caller's only workspace.
    /// A workspace the caller does not belong to is `not_found`, exactly like one that
    /// does not exist.
    pub fn workspace(&self, explicit: Option<&str>, default: Option<&str>) -> Result<&'a Membership, ApiError> {
        match explicit.or(default) {
            Some(id) => {
                self.memberships.iter().find(|m| m.workspace_id == id).ok_or_else(|| ApiError::not_found("Workspace"))
            }
            None => match self.memberships {
                [only] => Ok(only),
                _ => Err(ApiError::workspace_required()),
            },
        }
    }

    /// Scope first (what the agent was delegated), then role (what the person may do).
    pub fn authorize(&self, membership: &Membership, resource: Resource, access: Access) -> Result<(), ApiError> {
        match permission(&self.identity.scopes, Some(membership.role), resource, access) {
            Ok(()) => Ok(()),
            Err(Refusal::Scope) => Err(insufficient_scope(self.identity, resource, access)),
            Err(Refusal::Role) => Err(role_refusal(Some(membership.role), resource, access)),
        }
    }
}

/// 403 `forbidden`: a role that does not allow `access` to `resource`, in the one text
/// both doors answer — the role of the workspace the call acts in, or (`None`) no role
/// in any of the caller's workspaces (a tool called without naming one).
pub fn role_refusal(role: Option<Role>, resource: Resource, access: Access) -> ApiError {
    let verb = match access {
        Access::Read => "read",
        Access::Write => "change",
        Access::Delete => "delete",
        Access::Bank => "send to the bank",
    };
    let resource = resource.as_str();
    ApiError::forbidden(match role {
        Some(role) => format!("The role {} may not {verb} {resource} in this workspace", role.as_str()),
        None => format!("No role of yours may {verb} {resource} in any of your workspaces"),
    })
}

/// 403 `insufficient_scope`: the scope `access` on `resource` needs, and what the token
/// was granted.
pub fn insufficient_scope(identity: &Identity, resource: Resource, access: Access) -> ApiError {
    ApiError::insufficient_scope(&ScopeSet::required(resource, access), identity.scopes.granted())
}
