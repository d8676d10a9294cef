//! Demo data for local use and tests: two workspaces (so isolation is visible) and
//! users in the roles owner, finance and viewer. Ids are fixed so documentation,
//! event fixtures and scripts can name them. Everything is written in one transaction
//! with `created_via = 'system'`. What the demo pays and charges through the bank is
//! in `banking.rs`, Beta's records beyond its account and payable in `beta.rs`.

mod banking;
mod beta;

use crate::storage::{sql, Conn};
use serde::Serialize;

use super::Db;
use crate::domain::roles::Role;

pub const DEMO_WORKSPACE_ACME: &str = "2b93f876-769a-4bdc-b23e-304957f313b4";
pub const DEMO_WORKSPACE_BETA: &str = "7d0c6a7e-1f43-4e0b-9c55-3b1f2a9e8c10";
/// The demo owner: the user `serve` prints a dev token for.
pub const DEMO_OWNER: &str = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01";
pub const DEMO_FINANCE: &str = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a02";
pub const DEMO_VIEWER: &str = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a03";
pub const DEMO_BETA_OWNER: &str = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a04";

const WORKSPACES: &[(&str, &str)] = &[(DEMO_WORKSPACE_ACME, "Acme Comércio"), (DEMO_WORKSPACE_BETA, "Beta Tecnologia")];

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
    (
        "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a12",
        DEMO_WORKSPACE_ACME,
        "Acme Serviços Ltda",
        "Acme Serviços",
        "11444777000161",
    ),
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
pub async fn is_empty(db: &Db) -> Result<bool, crate::storage::Error> {
    let row = sql::query("SELECT COUNT(*) FROM workspaces").fetch_one(db).await?;
    Ok(row.try_get::<i64, _>(0)? == 0)
}

/// Writes the demo data unless it is already there. Returns whether it wrote anything.
pub async fn run(db: &Db) -> Result<bool, crate::storage::Error> {
    run_with(db, true).await
}

/// The demo's workspaces, users, memberships and companies, with the finance records
/// (`finance`) or without them (a clean slate for tests of a single resource).
pub async fn run_with(db: &Db, finance: bool) -> Result<bool, crate::storage::Error> {
    let mut tx = db.begin().await?;
    let present = sql::query("SELECT 1 FROM workspaces WHERE id = $1")
        .bind(DEMO_WORKSPACE_ACME)
        .fetch_optional(&mut *tx)
        .await?
        .is_some();
    if present {
        return Ok(false);
    }
    let now = crate::clock::now_rfc3339();
    for &(id, name) in WORKSPACES {
        sql::query("INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(name)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
    }
    for &(id, email, name) in USERS {
        sql::query("INSERT INTO users (id, email, name, created_at) VALUES ($1, $2, $3, $4)")
            .bind(id)
            .bind(email)
            .bind(name)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
    }
    for &(workspace, user, role) in MEMBERSHIPS {
        sql::query("INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)")
            .bind(workspace)
            .bind(user)
            .bind(role.as_str())
            .bind(&now)
            .execute(&mut *tx)
            .await?;
    }
    for &(id, workspace, name, trade_name, document) in COMPANIES {
        sql::query(
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
    if finance {
        seed_finance(&mut tx, &now).await?;
    }
    super::audit::append(
        &mut *tx,
        crate::domain::channel::Channel::System,
        &super::audit::AuditEvent { action: "seed", outcome: "ok", ..Default::default() },
    )
    .await?;
    tx.commit().await?;
    Ok(true)
}

const ACME: &str = "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11";
const BETA: &str = "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a21";

/// A demo bill: id, workspace, company, kind, description, cents, due date, status,
/// person, category and, when settled, its settlement: the account, the payment date and
/// the ledger transaction.
type DemoBill = (
    &'static str,
    Option<&'static str>,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    Option<(&'static str, &'static str, &'static str)>,
);

/// Runs one demo INSERT with its binds (all text; NULL where `None`).
async fn insert(conn: &mut Conn, sql: &'static str, binds: &[Option<&str>]) -> Result<(), crate::storage::Error> {
    let mut query = sql::query(sql);
    for b in binds {
        query = query.bind(*b);
    }
    query.execute(&mut *conn).await.map(|_| ())
}

/// The demo finance records of both workspaces: accounts, a category tree, cost
/// centers, people, taxes, payables and receivables in every status (settled ones with
/// their settlement transactions), manual transactions and one attachment.
async fn seed_finance(conn: &mut Conn, now: &str) -> Result<(), crate::storage::Error> {
    let acme_ws = Some(DEMO_WORKSPACE_ACME);
    let beta_ws = Some(DEMO_WORKSPACE_BETA);
    let now = Some(now);
    // Accounts: (id, workspace, company, name, type, its bank's COMPE code, opening cents)
    for (id, ws, company, name, kind, bank, opening) in [
        (
            "a1b2c3d4-0001-4000-8000-000000000001",
            acme_ws,
            ACME,
            "Conta corrente Itaú",
            "checking",
            Some("341"),
            "1000000",
        ),
        ("a1b2c3d4-0001-4000-8000-000000000002", acme_ws, ACME, "Caixa", "cash", None, "50000"),
        (
            "a1b2c3d4-0001-4000-8000-000000000021",
            beta_ws,
            BETA,
            "Conta corrente Nubank",
            "checking",
            Some("260"),
            "250000",
        ),
    ] {
        insert(
            conn,
            "INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, bank_id, opening_balance_cents,
                                             created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, $5, (SELECT id FROM banks WHERE code = $6 AND listed = 1), CAST($7 AS BIGINT), $8, $8,
                     'system', 'system')",
            &[Some(id), ws, Some(company), Some(name), Some(kind), bank, Some(opening), now],
        )
        .await?;
    }
    // Category tree: (id, parent, level, name, type)
    for (id, parent, level, name, kind) in [
        ("ca7e0000-0001-4000-8000-000000000001", None, "1", "Despesas operacionais", "debit"),
        ("ca7e0000-0001-4000-8000-000000000002", Some("ca7e0000-0001-4000-8000-000000000001"), "2", "Pessoal", "debit"),
        (
            "ca7e0000-0001-4000-8000-000000000003",
            Some("ca7e0000-0001-4000-8000-000000000002"),
            "3",
            "Salários",
            "debit",
        ),
        ("ca7e0000-0001-4000-8000-000000000004", Some("ca7e0000-0001-4000-8000-000000000001"), "2", "Aluguel", "debit"),
        (
            "ca7e0000-0001-4000-8000-000000000005",
            Some("ca7e0000-0001-4000-8000-000000000001"),
            "2",
            "Material de escritório",
            "debit",
        ),
        ("ca7e0000-0001-4000-8000-000000000006", None, "1", "Receitas", "credit"),
        ("ca7e0000-0001-4000-8000-000000000007", Some("ca7e0000-0001-4000-8000-000000000006"), "2", "Vendas", "credit"),
    ] {
        insert(
            conn,
            "INSERT INTO categories (id, workspace_id, company_id, name, parent_id, level, category_type, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, $5, CAST($6 AS INTEGER), $7, $8, $8, 'system', 'system')",
            &[Some(id), acme_ws, Some(ACME), Some(name), parent, Some(level), Some(kind), now],
        )
        .await?;
    }
    for (id, name, kind) in [
        ("cc000000-0001-4000-8000-000000000001", "Administrativo", "cost"),
        ("cc000000-0001-4000-8000-000000000002", "Comercial", "both"),
        ("cc000000-0001-4000-8000-000000000003", "Projetos", "revenue"),
    ] {
        insert(
            conn,
            "INSERT INTO classification_centers (id, workspace_id, company_id, name, center_type, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, $5, $6, $6, 'system', 'system')",
            &[Some(id), acme_ws, Some(ACME), Some(name), Some(kind), now],
        )
        .await?;
    }
    // People: (id, name, kind, document type, document, supplier, customer)
    for (id, name, kind, doc_type, doc, supplier, customer) in [
        (
            "9e000000-0001-4000-8000-000000000001",
            "Imobiliária Central Ltda",
            "juridical",
            "cnpj",
            "45997418000153",
            "1",
            "0",
        ),
        (
            "9e000000-0001-4000-8000-000000000002",
            "Papelaria Boa Vista",
            "juridical",
            "cnpj",
            "11444777000242",
            "1",
            "0",
        ),
        (
            "9e000000-0001-4000-8000-000000000003",
            "Cliente Exemplo S.A.",
            "juridical",
            "cnpj",
            "11444777000323",
            "0",
            "1",
        ),
        ("9e000000-0001-4000-8000-000000000004", "Maria Oliveira", "natural", "cpf", "39053344705", "0", "1"),
    ] {
        insert(
            conn,
            "INSERT INTO people (id, workspace_id, company_id, name, kind, document_type, document_number, is_supplier, is_customer,
                                 emails, phones, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, $5, $6, $7, CAST($8 AS INTEGER), CAST($9 AS INTEGER), '[]', '[]', $10, $10, 'system', 'system')",
            &[Some(id), acme_ws, Some(ACME), Some(name), Some(kind), Some(doc_type), Some(doc), Some(supplier), Some(customer), now],
        )
        .await?;
    }
    for (id, name, rate) in [
        ("7a000000-0001-4000-8000-000000000001", "IRRF", "150"),
        ("7a000000-0001-4000-8000-000000000002", "ISS", "500"),
        ("7a000000-0001-4000-8000-000000000003", "INSS", "1100"),
    ] {
        insert(
            conn,
            "INSERT INTO taxes (id, workspace_id, name, default_rate_bp, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, CAST($4 AS INTEGER), $5, $5, 'system', 'system')",
            &[Some(id), acme_ws, Some(name), Some(rate), now],
        )
        .await?;
    }
    // Bills: (id, workspace, company, kind, description, cents, due, status, person, category, settlement:
    // (account, payment date, ledger transaction))
    let bills: [DemoBill; 10] = [
        (
            "b1110000-0001-4000-8000-000000000001",
            acme_ws,
            ACME,
            "payable",
            "Aluguel de dezembro",
            "450000",
            "2026-12-10",
            "pending",
            Some("9e000000-0001-4000-8000-000000000001"),
            Some("ca7e0000-0001-4000-8000-000000000004"),
            None,
        ),
        (
            "b1110000-0001-4000-8000-000000000002",
            acme_ws,
            ACME,
            "payable",
            "Aluguel de novembro",
            "450000",
            "2026-11-10",
            "paid",
            Some("9e000000-0001-4000-8000-000000000001"),
            Some("ca7e0000-0001-4000-8000-000000000004"),
            Some(("a1b2c3d4-0001-4000-8000-000000000001", "2026-11-10", "7e000000-0001-4000-8000-000000000001")),
        ),
        (
            "b1110000-0001-4000-8000-000000000003",
            acme_ws,
            ACME,
            "payable",
            "Material de escritório",
            "32000",
            "2026-11-05",
            "cancelled",
            Some("9e000000-0001-4000-8000-000000000002"),
            Some("ca7e0000-0001-4000-8000-000000000005"),
            None,
        ),
        (
            "b1110000-0001-4000-8000-000000000004",
            acme_ws,
            ACME,
            "payable",
            "Papelaria — reposição",
            "15000",
            "2026-11-20",
            "pending",
            Some("9e000000-0001-4000-8000-000000000002"),
            Some("ca7e0000-0001-4000-8000-000000000005"),
            None,
        ),
        (
            "b1110000-0001-4000-8000-000000000005",
            acme_ws,
            ACME,
            "receivable",
            "Venda NF-1001",
            "1200000",
            "2026-12-15",
            "pending",
            Some("9e000000-0001-4000-8000-000000000003"),
            Some("ca7e0000-0001-4000-8000-000000000007"),
            None,
        ),
        (
            "b1110000-0001-4000-8000-000000000006",
            acme_ws,
            ACME,
            "receivable",
            "Venda NF-0999",
            "800000",
            "2026-11-25",
            "received",
            Some("9e000000-0001-4000-8000-000000000004"),
            Some("ca7e0000-0001-4000-8000-000000000007"),
            Some(("a1b2c3d4-0001-4000-8000-000000000001", "2026-11-25", "7e000000-0001-4000-8000-000000000002")),
        ),
        (
            "b1110000-0001-4000-8000-000000000007",
            acme_ws,
            ACME,
            "receivable",
            "Venda NF-0998 (devolvida)",
            "50000",
            "2026-11-15",
            "cancelled",
            Some("9e000000-0001-4000-8000-000000000003"),
            Some("ca7e0000-0001-4000-8000-000000000007"),
            None,
        ),
        (
            ACME_SERVICE_CHARGE_DECEMBER,
            acme_ws,
            ACME,
            "payable",
            "Condomínio de dezembro",
            "85000",
            "2026-12-15",
            "pending",
            Some(ACME_LANDLORD),
            Some(ACME_RENT_CATEGORY),
            None,
        ),
        (
            ACME_DARF_NOVEMBER,
            acme_ws,
            ACME,
            "payable",
            "DARF IRPJ de novembro",
            "83045",
            "2026-12-20",
            "pending",
            None,
            None,
            None,
        ),
        (
            "b1110000-0001-4000-8000-000000000021",
            beta_ws,
            BETA,
            "payable",
            "Licenças de software",
            "99000",
            "2026-12-05",
            "pending",
            None,
            None,
            None,
        ),
    ];
    for (id, ws, company, kind, description, cents, due, status, person, category, settled) in bills {
        let (account, paid_on) = (settled.map(|s| s.0), settled.map(|s| s.1));
        insert(
            conn,
            "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date, billing_type, status,
                                   person_id, category_id, financial_account_id, payment_date, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, $5, CAST($6 AS BIGINT), $7, $7, 'normal', $8, $9, $10, $11, $12, $13, $13, 'system', 'system')",
            &[Some(id), ws, Some(company), Some(kind), Some(description), Some(cents), Some(due), Some(status), person, category, account, paid_on, now],
        )
        .await?;
        if let Some((account, paid_on, transaction)) = settled {
            // The settlement's ledger movement, linked both ways.
            let direction = if kind == "payable" { "debit" } else { "credit" };
            insert(
                conn,
                "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents, occurred_at,
                                                     competence_date, transaction_type, category_id, person_id, classified, auto_created,
                                                     billing_id, created_at, updated_at, created_via, updated_via)
                 VALUES ($1, $2, $3, $4, $5, CAST($6 AS BIGINT), $7, $7, $8, $9, $10, 1, 1, $11, $12, $12, 'system', 'system')",
                &[Some(transaction), ws, Some(company), Some(account), Some(description), Some(cents), Some(paid_on), Some(direction), category, person, Some(id), now],
            )
            .await?;
            insert(conn, "UPDATE billings SET transaction_id = $1 WHERE id = $2", &[Some(transaction), Some(id)])
                .await?;
        }
    }
    // Apportionment of December's rent: all administrative.
    insert(
        conn,
        "INSERT INTO allocations (owner_type, owner_id, workspace_id, classification_center_id, position, percentage_bp)
         VALUES ('billing', 'b1110000-0001-4000-8000-000000000001', $1, 'cc000000-0001-4000-8000-000000000001', 0, 10000)",
        &[acme_ws],
    )
    .await?;
    banking::connect(conn, acme_ws).await?;
    // A manual transaction: the partners' capital contribution.
    insert(
        conn,
        "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents, occurred_at,
                                             transaction_type, classified, created_at, updated_at, created_via, updated_via)
         VALUES ('7e000000-0001-4000-8000-000000000003', $1, $2, 'a1b2c3d4-0001-4000-8000-000000000002', 'Aporte dos sócios', 200000,
                 '2026-11-02', 'credit', 0, $3, $3, 'system', 'system')",
        &[acme_ws, Some(ACME), now],
    )
    .await?;
    // One attachment: the receipt of November's rent, linked to its payable.
    let pdf: &[u8] = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n";
    let receipt = DemoFile {
        id: "a7000000-0001-4000-8000-000000000001",
        workspace_id: DEMO_WORKSPACE_ACME,
        file_name: "recibo-aluguel-novembro.pdf",
        title: "Recibo do aluguel de novembro",
        mime_type: "application/pdf",
        content: pdf,
    };
    attach(conn, &receipt, Some(("payable", "b1110000-0001-4000-8000-000000000002")), now).await?;
    // November's statement of the checking account, uploaded and not imported yet: its
    // Pix paid the stationery bill (a reconciliation to find), its Uber ride meets a rule.
    let statement = DemoFile {
        id: ACME_NOVEMBER_STATEMENT,
        workspace_id: DEMO_WORKSPACE_ACME,
        file_name: "extrato-itau-novembro.ofx",
        title: "Extrato Itaú — novembro",
        mime_type: "application/x-ofx",
        content: include_bytes!("../demo/extrato-itau-novembro.ofx"),
    };
    attach(conn, &statement, None, now).await?;
    // Automatic rules: ride-hailing debits are operating expenses of the admin center;
    // the building's service-charge bills are rent, paid from checking to the landlord.
    for (id, scope, contains, category, center, account, person) in [
        (
            ACME_RIDES_RULE,
            "transactions",
            "uber",
            "ca7e0000-0001-4000-8000-000000000001",
            Some(ACME_ADMIN_COST_CENTER),
            None,
            None,
        ),
        (
            ACME_SERVICE_CHARGE_RULE,
            "billings",
            "condomínio",
            ACME_RENT_CATEGORY,
            None,
            Some(ACME_CHECKING_ACCOUNT),
            Some(ACME_LANDLORD),
        ),
    ] {
        insert(
            conn,
            "INSERT INTO automatic_rules (id, workspace_id, company_id, scope, position, transaction_type, description_contains,
                                          set_category_id, set_classification_center_id, set_expected_account_id, set_person_id,
                                          created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, 1, 'debit', $5, $6, $7, $8, $9, $10, $10, 'system', 'system')",
            &[Some(id), acme_ws, Some(ACME), Some(scope), Some(contains), Some(category), center, account, person, now],
        )
        .await?;
    }
    beta::seed(conn, now).await
}

/// A demo attachment, stored in the database.
struct DemoFile {
    id: &'static str,
    workspace_id: &'static str,
    file_name: &'static str,
    title: &'static str,
    mime_type: &'static str,
    content: &'static [u8],
}

/// Stores `file` and links it to `target` (type, id), if any.
async fn attach(
    conn: &mut Conn,
    file: &DemoFile,
    target: Option<(&str, &str)>,
    now: Option<&str>,
) -> Result<(), crate::storage::Error> {
    let digest: String = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, file.content)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    sql::query(
        "INSERT INTO attachments (id, workspace_id, file_name, title, mime_type, file_size, sha256, content, uploaded_by, uploaded_at, created_via)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'system', $9, 'system')",
    )
    .bind(file.id)
    .bind(file.workspace_id)
    .bind(file.file_name)
    .bind(file.title)
    .bind(file.mime_type)
    .bind(file.content.len() as i64)
    .bind(digest)
    .bind(file.content.to_vec())
    .bind(now)
    .execute(&mut *conn)
    .await?;
    let Some((target_type, target_id)) = target else { return Ok(()) };
    insert(
        conn,
        "INSERT INTO attachment_links (attachment_id, workspace_id, target_type, target_id, created_at, created_via)
         VALUES ($1, $2, $3, $4, $5, 'system')",
        &[Some(file.id), Some(file.workspace_id), Some(target_type), Some(target_id), now],
    )
    .await
}

/// Fixed ids of the demo companies: Acme Comércio (Acme's records live there), Acme
/// Serviços (a second company of Acme's workspace, without records) and Beta Tecnologia.
pub const ACME_COMPANY: &str = "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11";
pub const ACME_SERVICES: &str = "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a12";
pub const BETA_COMPANY: &str = "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a21";

/// Fixed ids of Acme's demo records (Acme Comércio), for tests and fixtures that name them.
pub const ACME_CHECKING_ACCOUNT: &str = "a1b2c3d4-0001-4000-8000-000000000001";
/// The checking account as the banking gateway knows it (`financial_account_uid`, its
/// Pix charges' `pix_account_uid`).
pub const ACME_CHECKING_KOBANA_UID: &str = "0190a5c2-7d1e-7c3b-9f1a-5b2e8d4c6a10";
/// The checking account's boleto agreement at the gateway (`bank_billet_account_id`).
pub const ACME_CHECKING_BILLET_ACCOUNT: &str = "4242";
pub const ACME_CASH_ACCOUNT: &str = "a1b2c3d4-0001-4000-8000-000000000002";
pub const ACME_SALARIES_CATEGORY: &str = "ca7e0000-0001-4000-8000-000000000003";
pub const ACME_RENT_CATEGORY: &str = "ca7e0000-0001-4000-8000-000000000004";
pub const ACME_SALES_CATEGORY: &str = "ca7e0000-0001-4000-8000-000000000007";
pub const ACME_ADMIN_COST_CENTER: &str = "cc000000-0001-4000-8000-000000000001";
pub const ACME_LANDLORD: &str = "9e000000-0001-4000-8000-000000000001";
pub const ACME_CUSTOMER_MARIA: &str = "9e000000-0001-4000-8000-000000000004";
pub const ACME_IRRF_TAX: &str = "7a000000-0001-4000-8000-000000000001";
pub const ACME_ISS_TAX: &str = "7a000000-0001-4000-8000-000000000002";
pub const ACME_INSS_TAX: &str = "7a000000-0001-4000-8000-000000000003";
/// December's rent: pending, apportioned to the administrative cost center.
pub const ACME_RENT_DECEMBER: &str = "b1110000-0001-4000-8000-000000000001";
/// November's rent: paid from the checking account, with its receipt attached.
pub const ACME_RENT_NOVEMBER: &str = "b1110000-0001-4000-8000-000000000002";
pub const ACME_SUPPLIES_CANCELLED: &str = "b1110000-0001-4000-8000-000000000003";
pub const ACME_SUPPLIES_PENDING: &str = "b1110000-0001-4000-8000-000000000004";
pub const ACME_SALE_PENDING: &str = "b1110000-0001-4000-8000-000000000005";
pub const ACME_SALE_RECEIVED: &str = "b1110000-0001-4000-8000-000000000006";
pub const ACME_SALE_CANCELLED: &str = "b1110000-0001-4000-8000-000000000007";
/// December's service charge: pending, paid by TED to the building's administrator.
pub const ACME_SERVICE_CHARGE_DECEMBER: &str = "b1110000-0001-4000-8000-000000000008";
/// November's corporate income tax (DARF): pending, paid by its data (no barcode).
pub const ACME_DARF_NOVEMBER: &str = "b1110000-0001-4000-8000-000000000009";
/// The settlement transaction of November's rent.
pub const ACME_RENT_SETTLEMENT: &str = "7e000000-0001-4000-8000-000000000001";
/// The manual transaction: the partners' capital contribution.
pub const ACME_CAPITAL_CONTRIBUTION: &str = "7e000000-0001-4000-8000-000000000003";
/// The receipt of November's rent.
pub const ACME_RENT_RECEIPT: &str = "a7000000-0001-4000-8000-000000000001";
/// The checking account's November statement (OFX), not imported.
pub const ACME_NOVEMBER_STATEMENT: &str = "a7000000-0001-4000-8000-000000000002";

/// Fixed ids of Beta's demo records (one of each resource, so the isolation tests can
/// call every route of the other workspace with a real id).
pub const BETA_ACCOUNT: &str = "a1b2c3d4-0001-4000-8000-000000000021";
pub const BETA_CASH_ACCOUNT: &str = "a1b2c3d4-0001-4000-8000-000000000022";
pub const BETA_CATEGORY: &str = "ca7e0000-0001-4000-8000-000000000021";
pub const BETA_COST_CENTER: &str = "cc000000-0001-4000-8000-000000000021";
pub const BETA_PERSON: &str = "9e000000-0001-4000-8000-000000000021";
pub const BETA_TAX: &str = "7a000000-0001-4000-8000-000000000021";
pub const BETA_PAYABLE: &str = "b1110000-0001-4000-8000-000000000021";
pub const BETA_RECEIVABLE: &str = "b1110000-0001-4000-8000-000000000022";
pub const BETA_SETTLEMENT_TRANSACTION: &str = "7e000000-0001-4000-8000-000000000021";
pub const BETA_TRANSFER: &str = "7f000000-0001-4000-8000-000000000021";
pub const BETA_ATTACHMENT: &str = "a7000000-0001-4000-8000-000000000021";
pub const BETA_RULE: &str = "5e1e0000-0001-4000-8000-000000000021";
/// Acme's automatic rules: Uber debits, and the building's service-charge bills.
pub const ACME_RIDES_RULE: &str = "5e1e0000-0001-4000-8000-000000000001";
pub const ACME_SERVICE_CHARGE_RULE: &str = "5e1e0000-0001-4000-8000-000000000002";
