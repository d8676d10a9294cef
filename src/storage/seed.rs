//! Demo data for local use and tests: two workspaces (so isolation is visible) and
//! users in the roles owner, finance and viewer. Ids are fixed so documentation,
//! event fixtures and scripts can name them. Everything is written in one transaction
//! with `created_via = 'system'`.

use serde::Serialize;
use sqlx::Row;

use super::Db;
use crate::domain::roles::Role;

pub const DEMO_WORKSPACE_ACME: &str = "2b93f876-769a-4bdc-b23e-304957f313b4";
pub const DEMO_WORKSPACE_BETA: &str = "7d0c6a7e-1f43-4e0b-9c55-3b1f2a9e8c10";
/// The demo owner: the user `serve` prints a dev token for.
pub const DEMO_OWNER: &str = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01";
pub const DEMO_FINANCE: &str = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a02";
pub const DEMO_VIEWER: &str = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a03";
pub const DEMO_BETA_OWNER: &str = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a04";

const WORKSPACES: &[(&str, &str)] =
    &[(DEMO_WORKSPACE_ACME, "Acme Comércio"), (DEMO_WORKSPACE_BETA, "Beta Tecnologia")];

const USERS: &[(&str, &str, &str)] = &[
    (DEMO_OWNER, "ana.souza@demo.kobana.com.br", "Ana Souza"),
    (DEMO_FINANCE, "bruno.lima@demo.kobana.com.br", "Bruno Lima"),
    (DEMO_VIEWER, "carla.dias@demo.kobana.com.br", "Carla Dias"),
    (DEMO_BETA_OWNER, "diego.rocha@demo.kobana.com.br", "Diego Rocha"),
];

const MEMBERSHIPS: &[(&str, &str, Role)] = &[
    (DEMO_WORKSPACE_ACME, DEMO_OWNER, Role::Owner),
    (DEMO_WORKSPACE_ACME, DEMO_FINANCE, Role::Finance),
    (DEMO_WORKSPACE_ACME, DEMO_VIEWER, Role::Viewer),
    (DEMO_WORKSPACE_BETA, DEMO_BETA_OWNER, Role::Owner),
    (DEMO_WORKSPACE_BETA, DEMO_FINANCE, Role::Viewer),
];

/// (id, workspace, legal name, trade name, CNPJ)
const COMPANIES: &[(&str, &str, &str, &str, &str)] = &[
    ("c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11", DEMO_WORKSPACE_ACME, "Acme Comércio Ltda", "Acme", "11222333000181"),
    ("c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a12", DEMO_WORKSPACE_ACME, "Acme Serviços Ltda", "Acme Serviços", "11444777000161"),
    ("c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a21", DEMO_WORKSPACE_BETA, "Beta Tecnologia S.A.", "Beta", "45997418000153"),
];

#[derive(Debug, Serialize)]
pub struct SeededWorkspace {
    pub id: &'static str,
    pub name: &'static str,
}

#[derive(Debug, Serialize)]
pub struct SeededUser {
    pub id: &'static str,
    pub email: &'static str,
    pub role_by_workspace: serde_json::Map<String, serde_json::Value>,
}

/// What `seed --json` prints.
#[derive(Debug, Serialize)]
pub struct SeedReport {
    pub workspaces: Vec<SeededWorkspace>,
    pub users: Vec<SeededUser>,
}

pub fn report() -> SeedReport {
    SeedReport {
        workspaces: WORKSPACES.iter().map(|&(id, name)| SeededWorkspace { id, name }).collect(),
        users: USERS
            .iter()
            .map(|&(id, email, _)| SeededUser {
                id,
                email,
                role_by_workspace: MEMBERSHIPS
                    .iter()
                    .filter(|m| m.1 == id)
                    .map(|m| (m.0.to_string(), serde_json::Value::from(m.2.as_str())))
                    .collect(),
            })
            .collect(),
    }
}

/// True when the database has no workspace yet (a fresh install).
pub async fn is_empty(db: &Db) -> Result<bool, sqlx::Error> {
    let row = sqlx::query("SELECT COUNT(*) FROM workspaces").fetch_one(&db.pool).await?;
    Ok(row.try_get::<i64, _>(0)? == 0)
}

/// Writes the demo data unless it is already there. Returns whether it wrote anything.
pub async fn run(db: &Db) -> Result<bool, sqlx::Error> {
    let mut tx = db.pool.begin().await?;
    let present = sqlx::query("SELECT 1 FROM workspaces WHERE id = $1")
        .bind(DEMO_WORKSPACE_ACME)
        .fetch_optional(&mut *tx)
        .await?
        .is_some();
    if present {
        return Ok(false);
    }
    let now = crate::clock::now_rfc3339();
    for &(id, name) in WORKSPACES {
        sqlx::query("INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(name)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
    }
    for &(id, email, name) in USERS {
        sqlx::query("INSERT INTO users (id, email, name, created_at) VALUES ($1, $2, $3, $4)")
            .bind(id)
            .bind(email)
            .bind(name)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
    }
    for &(workspace, user, role) in MEMBERSHIPS {
        sqlx::query("INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)")
            .bind(workspace)
            .bind(user)
            .bind(role.as_str())
            .bind(&now)
            .execute(&mut *tx)
            .await?;
    }
    for &(id, workspace, name, trade_name, document) in COMPANIES {
        sqlx::query(
            "INSERT INTO companies (id, workspace_id, name, trade_name, cnpj, company_type, active, created_at, updated_at,
                                    created_via, updated_via)
             VALUES ($1, $2, $3, $4, $5, 'matriz', 1, $6, $6, 'system', 'system')",
        )
        .bind(id)
        .bind(workspace)
        .bind(name)
        .bind(trade_name)
        .bind(document)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    }
    super::audit::append(
        &mut *tx,
        crate::ops::Channel::System,
        &super::audit::AuditEvent { action: "seed", outcome: "ok", ..Default::default() },
    )
    .await?;
    tx.commit().await?;
    Ok(true)
}
