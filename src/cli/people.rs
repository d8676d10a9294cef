//! The commands of who has access, for whoever runs the deployment: a workspace and its
//! first owner, members and invitations, connected apps. They act as the deployment
//! itself (the audit says `system`); the rules that hold whoever asks — a workspace keeps
//! an owner — hold here too.

use clap::Subcommand;
use serde_json::json;

use super::{open, CliResult};
use crate::domain::channel::Channel;
use crate::domain::roles::Role;
use crate::storage::audit::{self, AuditEvent};
use crate::storage::people::{self, Changed, Invited};
use crate::storage::{migrate, Db};

#[derive(Subcommand, Debug)]
pub enum WorkspaceCommand {
    /// Create a workspace and invite its first owner: the person who signs in with that
    /// e-mail address, verified by the company's identity provider, within 7 days.
    /// Prints the workspace and the invitation as JSON. The same as the Lambda
    /// invocation {"kfin":"workspace-create","name":…,"owner_email":…}.
    Create {
        #[arg(long)]
        name: String,
        #[arg(long)]
        owner_email: String,
        #[arg(long)]
        database_url: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum MembersCommand {
    /// The workspace's members and their roles, as JSON.
    List {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        database_url: Option<String>,
    },
    /// The workspace's invitations (the last 200), as JSON.
    Invitations {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Invite an e-mail address with a role (a pending invitation of it is replaced).
    Invite {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        email: String,
        #[arg(long, value_parser = ["owner", "admin", "finance", "viewer"])]
        role: String,
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Give a member another role (their next request acts on it).
    Role {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        user: String,
        #[arg(long, value_parser = ["owner", "admin", "finance", "viewer"])]
        role: String,
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Remove a member from the workspace (their next request acts on it).
    Remove {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        user: String,
        #[arg(long)]
        database_url: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum AppsCommand {
    /// The apps that act for a person and, in the workspaces they own, for its people,
    /// as JSON (revoke one with `revoke --grant ID`).
    List {
        #[arg(long)]
        user: String,
        #[arg(long)]
        database_url: Option<String>,
    },
}

fn print(value: &serde_json::Value) -> CliResult {
    println!("{}", serde_json::to_string_pretty(value).map_err(|e| e.to_string())?);
    Ok(())
}

async fn opened(database_url: Option<String>) -> Result<crate::app::AppState, String> {
    let state = open(database_url).await?;
    migrate::run(&state.db).await.map_err(|e| format!("migration failed: {e}"))?;
    Ok(state)
}

fn failed(e: crate::storage::Error) -> String {
    e.to_string()
}

async fn workspace_exists(db: &Db, workspace: &str) -> CliResult {
    let mut conn = db.acquire().await.map_err(failed)?;
    match people::workspace_name(&mut conn, workspace).await.map_err(failed)? {
        Some(_) => Ok(()),
        None => Err(format!("no workspace {workspace}")),
    }
}

/// Appends the audit line of a change made from the command line, in `tx`.
async fn audited(
    tx: &mut crate::storage::Conn,
    workspace: &str,
    (action, target_type, target_id): (&str, &str, &str),
    details: serde_json::Value,
) -> CliResult {
    let event = AuditEvent {
        workspace_id: Some(workspace),
        action,
        target_type: Some(target_type),
        target_id: Some(target_id),
        outcome: "success",
        details: Some(details.to_string()),
        ..Default::default()
    };
    audit::append(tx, Channel::System, &event).await.map_err(failed)
}

pub async fn workspace(command: WorkspaceCommand) -> CliResult {
    let WorkspaceCommand::Create { name, owner_email, database_url } = command;
    let state = open(database_url).await?;
    print(&crate::transport::deploy::workspace_create(&state.db, &name, &owner_email).await?)
}

pub async fn members(command: MembersCommand) -> CliResult {
    let now = crate::clock::now_unix();
    match command {
        MembersCommand::List { workspace, database_url } => {
            let state = opened(database_url).await?;
            workspace_exists(&state.db, &workspace).await?;
            let mut conn = state.db.acquire().await.map_err(failed)?;
            let members = people::members(&mut conn, &workspace).await.map_err(failed)?;
            print(&json!({ "data": members }))
        }
        MembersCommand::Invitations { workspace, database_url } => {
            let state = opened(database_url).await?;
            workspace_exists(&state.db, &workspace).await?;
            let mut conn = state.db.acquire().await.map_err(failed)?;
            let invitations = people::invitations(&mut conn, &workspace).await.map_err(failed)?;
            let data: Vec<_> = invitations.iter().map(|i| crate::ops::access::InvitationView::of(i, now)).collect();
            print(&json!({ "data": data }))
        }
        MembersCommand::Invite { workspace, email, role, database_url } => {
            let email = crate::domain::email::normalized(&email)
                .ok_or_else(|| format!("{email:?} is not an e-mail address (name@example.com)"))?;
            let role = Role::parse(&role).ok_or("unknown role")?;
            let state = opened(database_url).await?;
            workspace_exists(&state.db, &workspace).await?;
            let mut tx = state.db.begin().await.map_err(failed)?;
            let new = people::NewInvitation { workspace_id: &workspace, email: &email, role, invited_by: None };
            let invitation = match people::invite(&mut tx, new, now).await.map_err(failed)? {
                Invited::Sent(invitation) => invitation,
                Invited::AlreadyMember { user_id } => {
                    return Err(format!("{email} is already a member (user {user_id}): change their role instead"))
                }
            };
            let details = json!({"email": email, "role": role.as_str()});
            audited(&mut tx, &workspace, ("members.invited", "invitation", &invitation.id), details).await?;
            tx.commit().await.map_err(failed)?;
            print(
                &serde_json::to_value(crate::ops::access::InvitationView::of(&invitation, now))
                    .map_err(|e| e.to_string())?,
            )
        }
        MembersCommand::Role { workspace, user, role, database_url } => {
            let role = Role::parse(&role).ok_or("unknown role")?;
            change(database_url, &workspace, &user, Some(role)).await
        }
        MembersCommand::Remove { workspace, user, database_url } => change(database_url, &workspace, &user, None).await,
    }
}

async fn change(database_url: Option<String>, workspace: &str, user: &str, to: Option<Role>) -> CliResult {
    let state = opened(database_url).await?;
    let mut tx = state.db.begin().await.map_err(failed)?;
    let was = match people::change(&mut tx, workspace, user, to).await.map_err(failed)? {
        Changed::Done(was) => was,
        Changed::NotMember => return Err(format!("{user} is not a member of {workspace}")),
        Changed::LastOwner => {
            return Err("the workspace's only owner must stay one: make another member an owner first".into())
        }
    };
    let (action, details) = match to {
        Some(role) => ("members.role_changed", json!({"from": was.as_str(), "to": role.as_str()})),
        None => ("members.removed", json!({"role": was.as_str()})),
    };
    audited(&mut tx, workspace, (action, "user", user), details).await?;
    tx.commit().await.map_err(failed)?;
    println!("{}", if to.is_some() { "role changed" } else { "removed" });
    Ok(())
}

pub async fn apps(command: AppsCommand) -> CliResult {
    let AppsCommand::List { user, database_url } = command;
    let state = opened(database_url).await?;
    let apps = crate::oauth::apps::list(&state.db, &user, crate::clock::now_unix()).await.map_err(failed)?;
    print(&json!({ "data": apps }))
}
