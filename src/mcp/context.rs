//! What an MCP method handler knows of its request: the caller (identity and, read at
//! most once, memberships), the era, the connection's default workspace and its view of
//! the catalogue — and the rule of which workspaces allow what, which `tools/list`,
//! resources and completion share.

use std::sync::Arc;

use tokio::sync::OnceCell;

use super::view::View;
use crate::app::AppState;
use crate::auth::Identity;
use crate::domain::roles::{permission, Access, Resource};
use crate::error::ApiError;
use crate::ops::{Channel, OpContext};
use crate::protocol::era::Era;
use crate::storage::identity::Membership;
use crate::storage::{Held, Lent};

/// What a request's admission step (its rate-limit count) read on the way: the
/// caller's memberships, when it read them, and the connection it kept (shared with the
/// endpoint, which sends a count riding on it that no statement carried).
#[derive(Default)]
pub struct Admitted {
    pub memberships: Option<Vec<Membership>>,
    pub held: Arc<Held>,
}

/// One MCP request's view of its caller and era.
pub struct McpContext<'a> {
    pub state: &'a AppState,
    pub identity: &'a Identity,
    pub era: &'a Era,
    /// The connection's default workspace (`X-Workspace-Id` or `?workspace_id=`).
    pub default_workspace: Option<String>,
    /// What of the catalogue this connection sees (SPEC §5.4).
    pub view: View,
    memberships: OnceCell<Vec<Membership>>,
    /// The connection the rate-limit count took, for a read.
    held: Arc<Held>,
}

impl<'a> McpContext<'a> {
    /// The context of a request; the caller's memberships, when they were read already
    /// (with the rate-limit count), are not read again.
    pub fn new(
        state: &'a AppState,
        identity: &'a Identity,
        era: &'a Era,
        default_workspace: Option<String>,
        view: View,
        admitted: Admitted,
    ) -> Self {
        let Admitted { memberships, held } = admitted;
        McpContext { state, identity, era, default_workspace, view, memberships: OnceCell::new_with(memberships), held }
    }

    /// A connection for the request's read: the one its count took, else the pool's.
    pub async fn connection(&self) -> Result<Lent<'_>, ApiError> {
        Ok(self.held.acquire(&self.state.db).await?)
    }

    /// Gives the count's connection back before the request takes another from the
    /// pool (a transaction, a statement on the pool).
    pub fn release_connection(&self) {
        self.held.release();
    }

    /// The caller's memberships, read from the database at most once per request.
    pub async fn memberships(&self) -> Result<&[Membership], ApiError> {
        self.memberships
            .get_or_try_init(|| async {
                crate::storage::identity::memberships(&self.state.db, &self.identity.user_id)
                    .await
                    .map_err(ApiError::from)
            })
            .await
            .map(Vec::as_slice)
    }

    /// The caller's workspaces where the token's scope and the role both allow `access`
    /// on `resource`: only `named` when given, else only the connection's default
    /// workspace when one is set, else all of them.
    pub async fn workspaces_allowing(
        &self,
        resource: Resource,
        access: Access,
        named: Option<&str>,
    ) -> Result<Vec<&Membership>, ApiError> {
        let only = named.or(self.default_workspace.as_deref());
        Ok(self.memberships().await?.iter().filter(|m| self.allows(m, resource, access, only)).collect())
    }

    /// Whether the caller may do `access` on `resource` somewhere (SPEC §5: the scope is
    /// in the token and the role grants it in the default workspace when one is given,
    /// else in any of the caller's workspaces). Asked once per tool by `tools/list`, so
    /// it collects nothing.
    pub async fn may(&self, resource: Resource, access: Access) -> Result<bool, ApiError> {
        let only = self.default_workspace.as_deref();
        Ok(self.memberships().await?.iter().any(|m| self.allows(m, resource, access, only)))
    }

    /// The rule of both: the token's scope, the workspace (`only`, if any) and the role.
    fn allows(&self, m: &Membership, resource: Resource, access: Access, only: Option<&str>) -> bool {
        only.is_none_or(|id| id == m.workspace_id)
            && permission(&self.identity.scopes, Some(m.role), resource, access).is_ok()
    }

    pub async fn op_context(&self) -> Result<OpContext<'_>, ApiError> {
        Ok(OpContext {
            state: self.state.services(),
            identity: self.identity,
            channel: Channel::Mcp,
            memberships: self.memberships().await?,
        })
    }
}
