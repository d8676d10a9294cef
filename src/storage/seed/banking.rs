//! What the demo pays and charges through the bank: how each pending payable of Acme is
//! paid — December's rent by the landlord's boleto, the stationery by the supplier's Pix
//! key, December's service charge by TED to the building's administrator, November's
//! DARF by its data —, the checking account connected to the banking gateway (the
//! embedded stand-in of `make run` knows it), and the billing address a boleto charge
//! needs of the customer.

use super::{
    insert, ACME_CHECKING_ACCOUNT, ACME_CHECKING_BILLET_ACCOUNT, ACME_CHECKING_KOBANA_UID, ACME_DARF_NOVEMBER,
    ACME_SERVICE_CHARGE_DECEMBER,
};
use crate::storage::Conn;

/// Writes the payables' coordinates and methods, the account's connection and the
/// customer's address in Acme's workspace `ws`.
pub(super) async fn connect(conn: &mut Conn, ws: Option<&str>) -> Result<(), crate::storage::Error> {
    // The rent's boleto (Itaú, R$ 4.500,00 due on the 10th; its digitable line), and the
    // stationery supplier's Pix key.
    insert(
        conn,
        "INSERT INTO payment_coordinates (billing_id, workspace_id, barcode, beneficiary_name, beneficiary_document)
         VALUES ('b1110000-0001-4000-8000-000000000001', $1, '34191090080000000000000000000018316560000450000',
                 'Imobiliária Central Ltda', '45997418000153')",
        &[ws],
    )
    .await?;
    insert(
        conn,
        "INSERT INTO payment_coordinates (billing_id, workspace_id, pix_key, pix_key_type)
         VALUES ('b1110000-0001-4000-8000-000000000004', $1, 'financeiro@papelariaboavista.com.br', 'email')",
        &[ws],
    )
    .await?;
    // The service charge goes by TED to the administrator's account at Itaú (as the
    // demo's service-charge rule files such a bill: from the checking account), and the
    // DARF by its data: revenue code 2089 (IRPJ, lucro presumido), Acme as the taxpayer.
    insert(
        conn,
        "UPDATE billings SET payment_method_kind = CASE id WHEN $1 THEN 'ted' ELSE 'tribute' END, expected_account_id = $3
          WHERE id IN ($1, $2)",
        &[Some(ACME_SERVICE_CHARGE_DECEMBER), Some(ACME_DARF_NOVEMBER), Some(ACME_CHECKING_ACCOUNT)],
    )
    .await?;
    insert(
        conn,
        "INSERT INTO payment_coordinates (billing_id, workspace_id, bank_code, agency, account_number, account_digit,
                                          transfer_purpose, beneficiary_name, beneficiary_document)
         VALUES ($1, $2, '341', '0912', '45871', '3', '98', 'Imobiliária Central Ltda', '45997418000153')",
        &[Some(ACME_SERVICE_CHARGE_DECEMBER), ws],
    )
    .await?;
    insert(
        conn,
        "INSERT INTO payment_coordinates (billing_id, workspace_id, tax_kind, tax_data, beneficiary_name)
         VALUES ($1, $2, 'darf', $3, 'Receita Federal do Brasil')",
        &[
            Some(ACME_DARF_NOVEMBER),
            ws,
            Some(
                r#"{"tax_code":"2089","taxpayer_type":"cnpj","taxpayer_number":"11222333000181","taxpayer_name":"Acme Comércio Ltda","calculation_date":"2026-11-30","expire_at":"2026-12-20"}"#,
            ),
        ],
    )
    .await?;
    insert(
        conn,
        "UPDATE financial_accounts SET kobana_account_uid = $1, kobana_billet_account_id = CAST($2 AS BIGINT) WHERE id = $3",
        &[Some(ACME_CHECKING_KOBANA_UID), Some(ACME_CHECKING_BILLET_ACCOUNT), Some(ACME_CHECKING_ACCOUNT)],
    )
    .await?;
    // The customer of the pending sale has a billing address (a boleto needs one).
    insert(
        conn,
        "UPDATE people SET billing_address = $1 WHERE id = $2",
        &[
            Some(r#"{"street":"Av. Paulista","number":"1000","neighborhood":"Bela Vista","city":"São Paulo","state":"SP","zip_code":"01310100"}"#),
            Some("9e000000-0001-4000-8000-000000000003"),
        ],
    )
    .await
}
