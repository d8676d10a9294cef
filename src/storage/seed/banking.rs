//! What the demo pays and charges through the bank: how each pending payable of Acme is
//! paid — December's rent by the landlord's boleto, the stationery by the supplier's Pix
//! key —, the checking account connected to the banking gateway (the embedded stand-in
//! of `make run` knows it), and the billing address a boleto charge needs of the
//! customer.

use super::{insert, ACME_CHECKING_ACCOUNT, ACME_CHECKING_BILLET_ACCOUNT, ACME_CHECKING_KOBANA_UID};
use crate::storage::Conn;

/// Writes the payables' coordinates, the account's connection and the customer's
/// address in Acme's workspace `ws`.
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
    // The checking account is connected to the banking gateway: payables are sent to
    // the bank from it.
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
