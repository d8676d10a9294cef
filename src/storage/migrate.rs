//! Schema migrations, embedded in the binary (a Lambda deployment has no files beside
//! it). Each migration runs in its own transaction together with its bookkeeping row,
//! so a failed or concurrent run leaves the schema either before or after it.

use crate::storage::sql;

use super::{Backend, Db};

struct Migration {
    version: i64,
    name: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
    /// Data it loads after its SQL, in the same transaction.
    data: Option<Data>,
}

/// Data a migration loads from files the binary ships.
#[derive(Clone, Copy)]
enum Data {
    /// The bank list, `data/banks/banks.csv` ([`super::banks::load_shipped`]).
    Banks,
}

impl Migration {
    /// A migration whose SQL is portable: one file for both backends.
    const fn portable(version: i64, name: &'static str, sql: &'static str) -> Migration {
        Migration { version, name, sqlite: sql, postgres: sql, data: None }
    }

    /// A migration with one file per backend.
    const fn per_backend(version: i64, name: &'static str, sqlite: &'static str, postgres: &'static str) -> Migration {
        Migration { version, name, sqlite, postgres, data: None }
    }

    /// Then loads `data`.
    const fn loading(self, data: Data) -> Migration {
        Migration { data: Some(data), ..self }
    }
}

/// In order.
const MIGRATIONS: &[Migration] = &[
    Migration::portable(1, "foundation", include_str!("../../migrations/0001_foundation.sql")),
    Migration::portable(2, "companies", include_str!("../../migrations/0002_companies.sql")),
    Migration::portable(3, "finance", include_str!("../../migrations/0003_finance.sql")),
    Migration::per_backend(
        4,
        "attachments",
        include_str!("../../migrations/0004_attachments.sqlite.sql"),
        include_str!("../../migrations/0004_attachments.postgres.sql"),
    ),
    Migration::portable(5, "blob_deletions", include_str!("../../migrations/0005_blob_deletions.sql")),
    Migration::portable(6, "billing_fields", include_str!("../../migrations/0006_billing_fields.sql")),
    Migration::portable(7, "payment_coordinates", include_str!("../../migrations/0007_payment_coordinates.sql")),
    Migration::portable(8, "reconciliations", include_str!("../../migrations/0008_reconciliations.sql")),
    Migration::portable(9, "flow_indexes", include_str!("../../migrations/0009_flow_indexes.sql")),
    Migration::portable(10, "automatic_rules", include_str!("../../migrations/0010_automatic_rules.sql")),
    Migration::portable(11, "statement_imports", include_str!("../../migrations/0011_statement_imports.sql")),
    Migration::portable(12, "banking_gateway", include_str!("../../migrations/0012_banking_gateway.sql")),
    Migration::per_backend(
        13,
        "unlogged_counters",
        include_str!("../../migrations/0013_unlogged_counters.sqlite.sql"),
        include_str!("../../migrations/0013_unlogged_counters.postgres.sql"),
    ),
    Migration::per_backend(
        14,
        "report_totals",
        include_str!("../../migrations/0014_report_totals.sqlite.sql"),
        include_str!("../../migrations/0014_report_totals.postgres.sql"),
    ),
    Migration::per_backend(
        15,
        "ted_and_tax_payments",
        include_str!("../../migrations/0015_ted_and_tax_payments.sqlite.sql"),
        include_str!("../../migrations/0015_ted_and_tax_payments.postgres.sql"),
    ),
    Migration::per_backend(
        16,
        "memberships_version",
        include_str!("../../migrations/0016_memberships_version.sqlite.sql"),
        include_str!("../../migrations/0016_memberships_version.postgres.sql"),
    ),
    Migration::per_backend(
        17,
        "counter_bucket_unchecked",
        include_str!("../../migrations/0017_counter_bucket_unchecked.sqlite.sql"),
        include_str!("../../migrations/0017_counter_bucket_unchecked.postgres.sql"),
    ),
    Migration::per_backend(
        18,
        "workspace_volume",
        include_str!("../../migrations/0018_workspace_volume.sqlite.sql"),
        include_str!("../../migrations/0018_workspace_volume.postgres.sql"),
    ),
    Migration::portable(19, "banks", include_str!("../../migrations/0019_banks.sql")).loading(Data::Banks),
    Migration::portable(20, "account_banks", include_str!("../../migrations/0020_account_banks.sql")),
    Migration::portable(21, "oauth", include_str!("../../migrations/0021_oauth.sql")),
    Migration::portable(22, "people", include_str!("../../migrations/0022_people.sql")),
    Migration::per_backend(
        23,
        "waiting_bills_owed",
        include_str!("../../migrations/0023_waiting_bills_owed.sqlite.sql"),
        include_str!("../../migrations/0023_waiting_bills_owed.postgres.sql"),
    ),
    Migration::per_backend(
        24,
        "cash_flow_and_suggestions",
        include_str!("../../migrations/0024_cash_flow_and_suggestions.sqlite.sql"),
        include_str!("../../migrations/0024_cash_flow_and_suggestions.postgres.sql"),
    ),
];

/// Applies the pending migrations; returns how many ran.
pub async fn run(db: &Db) -> Result<usize, crate::storage::Error> {
    db.execute_script(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    )
    .await?;
    let applied: Vec<i64> = sql::query("SELECT version FROM schema_migrations")
        .fetch_all(db)
        .await?
        .iter()
        .map(|row| row.try_get::<i64, _>(0))
        .collect::<Result<_, _>>()?;
    let mut count = 0;
    for migration in MIGRATIONS.iter().filter(|m| !applied.contains(&m.version)) {
        let sql = match db.backend {
            Backend::Sqlite => migration.sqlite,
            Backend::Postgres => migration.postgres,
        };
        let mut tx = db.begin().await?;
        // The bookkeeping row goes first: a concurrent runner blocks or fails on its
        // primary key instead of applying the same DDL twice.
        sql::query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)")
            .bind(migration.version)
            .bind(migration.name)
            .bind(crate::clock::now_rfc3339())
            .execute(&mut *tx)
            .await?;
        tx.execute_script(sql).await?;
        match migration.data {
            Some(Data::Banks) => super::banks::load_shipped(&mut tx).await?,
            None => {}
        }
        tx.commit().await?;
        tracing::info!(version = migration.version, name = migration.name, "migration applied");
        count += 1;
    }
    Ok(count)
}
