//! The demo's second workspace, Beta Tecnologia: one record of each resource, so the
//! isolation tests call every route of the other workspace with a real id.

use super::{
    attach, insert, DemoFile, BETA, BETA_ACCOUNT, BETA_ATTACHMENT, BETA_CASH_ACCOUNT, BETA_CATEGORY, BETA_COST_CENTER,
    BETA_PERSON, BETA_RECEIVABLE, BETA_RULE, BETA_SETTLEMENT_TRANSACTION, BETA_TAX, BETA_TRANSFER, DEMO_WORKSPACE_BETA,
};
use crate::storage::Conn;

/// Beta's records beyond its account and payable: a second account, a category, a
/// cost center, a person, a tax, a received receivable with its settlement, a transfer
/// between its two accounts and an attachment linked to the settlement.
pub(super) async fn seed(conn: &mut Conn, now: Option<&str>) -> Result<(), crate::storage::Error> {
    let ws = Some(DEMO_WORKSPACE_BETA);
    let company = Some(BETA);
    insert(
        conn,
        "INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, opening_balance_cents,
                                         created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'Caixa Beta', 'cash', 10000, $4, $4, 'system', 'system')",
        &[Some(BETA_CASH_ACCOUNT), ws, company, now],
    )
    .await?;
    insert(
        conn,
        "INSERT INTO categories (id, workspace_id, company_id, name, level, category_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'Infraestrutura em nuvem', 1, 'debit', $4, $4, 'system', 'system')",
        &[Some(BETA_CATEGORY), ws, company, now],
    )
    .await?;
    insert(
        conn,
        "INSERT INTO classification_centers (id, workspace_id, company_id, name, center_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'Engenharia Beta', 'cost', $4, $4, 'system', 'system')",
        &[Some(BETA_COST_CENTER), ws, company, now],
    )
    .await?;
    insert(
        conn,
        "INSERT INTO people (id, workspace_id, company_id, name, kind, document_type, document_number, is_supplier, is_customer,
                             emails, phones, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'Nuvem Sul Hospedagem Ltda', 'juridical', 'cnpj', '60456789000111', 1, 1, '[]', '[]', $4, $4, 'system', 'system')",
        &[Some(BETA_PERSON), ws, company, now],
    )
    .await?;
    insert(
        conn,
        "INSERT INTO taxes (id, workspace_id, name, default_rate_bp, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, 'PIS Beta', 65, $3, $3, 'system', 'system')",
        &[Some(BETA_TAX), ws, now],
    )
    .await?;
    insert(
        conn,
        "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date, billing_type, status,
                               person_id, financial_account_id, payment_date, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'receivable', 'Consultoria Beta NF-77', 777700, '2026-11-28', '2026-11-28', 'normal', 'received',
                 $4, $5, '2026-11-28', $6, $6, 'system', 'system')",
        &[Some(BETA_RECEIVABLE), ws, company, Some(BETA_PERSON), Some(BETA_ACCOUNT), now],
    )
    .await?;
    insert(
        conn,
        "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents, occurred_at,
                                             competence_date, transaction_type, person_id, classified, auto_created, billing_id,
                                             created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Consultoria Beta NF-77', 777700, '2026-11-28', '2026-11-28', 'credit', $5, 1, 1, $6, $7, $7, 'system', 'system')",
        &[Some(BETA_SETTLEMENT_TRANSACTION), ws, company, Some(BETA_ACCOUNT), Some(BETA_PERSON), Some(BETA_RECEIVABLE), now],
    )
    .await?;
    insert(
        conn,
        "UPDATE billings SET transaction_id = $1 WHERE id = $2",
        &[Some(BETA_SETTLEMENT_TRANSACTION), Some(BETA_RECEIVABLE)],
    )
    .await?;
    // The transfer: a debit in the checking account and a credit in the cash account.
    for (id, account, direction) in [
        ("7e000000-0001-4000-8000-000000000022", BETA_ACCOUNT, "debit"),
        ("7e000000-0001-4000-8000-000000000023", BETA_CASH_ACCOUNT, "credit"),
    ] {
        insert(
            conn,
            "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents, occurred_at,
                                                 transaction_type, classified, auto_created, transfer_id, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, 'Suprimento do caixa Beta', 33300, '2026-11-29', $5, 1, 0, $6, $7, $7, 'system', 'system')",
            &[Some(id), ws, company, Some(account), Some(direction), Some(BETA_TRANSFER), now],
        )
        .await?;
    }
    let xml: &[u8] = b"<?xml version=\"1.0\"?><nfse><numero>77</numero></nfse>\n";
    let invoice = DemoFile {
        id: BETA_ATTACHMENT,
        workspace_id: DEMO_WORKSPACE_BETA,
        file_name: "nfse-beta-77.xml",
        title: "NFS-e Beta 77",
        mime_type: "application/xml",
        content: xml,
    };
    attach(conn, &invoice, Some(("transaction", BETA_SETTLEMENT_TRANSACTION)), now).await?;
    insert(
        conn,
        "INSERT INTO automatic_rules (id, workspace_id, company_id, scope, position, description_contains, set_category_id,
                                      created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'billings', 1, 'hospedagem', $4, $5, $5, 'system', 'system')",
        &[Some(BETA_RULE), ws, company, Some(BETA_CATEGORY), now],
    )
    .await?;
    Ok(())
}
