//! `POST /v1/financial-accounts/{id}/statement-imports` and
//! `finance_accounts_import_statement`: an uploaded OFX or CSV statement becomes the
//! account's posted transactions, once per movement (a second import creates nothing),
//! each filled by the company's automatic rules; refused lines come back with their
//! numbers, and a file that is not a statement changes nothing.

use base64::Engine;
use http::Method;
use serde_json::{json, Value};

use crate::common::*;

const OPERATING_EXPENSES: &str = "ca7e0000-0001-4000-8000-000000000001";

/// An Itaú-style OFX 1.02 export: SGML without closing leaf tags, in cp1252 (the payer's
/// name is `José Ávila` in that code page). Movements start on lines 23, 30, 37, 43 and
/// 50; the third has no FITID, the fourth an impossible date.
fn ofx() -> Vec<u8> {
    let mut text: Vec<u8> = Vec::new();
    for line in [
        "OFXHEADER:100",
        "DATA:OFXSGML",
        "VERSION:102",
        "SECURITY:NONE",
        "ENCODING:USASCII",
        "CHARSET:1252",
        "COMPRESSION:NONE",
        "OLDFILEUID:NONE",
        "NEWFILEUID:NONE",
        "",
        "<OFX>",
        "<BANKMSGSRSV1>",
        "<STMTTRNRS>",
        "<STMTRS>",
        "<CURDEF>BRL",
        "<BANKACCTFROM>",
        "<BANKID>0341",
        "<ACCTID>12345-6",
        "</BANKACCTFROM>",
        "<BANKTRANLIST>",
        "<DTSTART>20261101",
        "<DTEND>20261130",
        "<STMTTRN>",
        "<TRNTYPE>DEBIT",
        "<DTPOSTED>20261120120000[-3:BRT]",
        "<TRNAMT>-42.90",
        "<FITID>20261120001",
        "<MEMO>UBER *TRIP HELP.UBER.COM",
        "</STMTTRN>",
        "<STMTTRN>",
        "<TRNTYPE>CREDIT",
        "<DTPOSTED>20261121",
        "<TRNAMT>1500,00",
        "<FITID>20261121002",
        "<NAME>PIX RECEBIDO Jos\u{e9} \u{c1}vila",
        "</STMTTRN>",
        "<STMTTRN>",
        "<TRNTYPE>DEBIT",
        "<DTPOSTED>20261122",
        "<TRNAMT>-10.00",
        "<MEMO>TARIFA",
        "</STMTTRN>",
        "<STMTTRN>",
        "<TRNTYPE>DEBIT",
        "<DTPOSTED>20261345",
        "<TRNAMT>-5.00",
        "<FITID>20261123004",
        "<MEMO>IOF",
        "</STMTTRN>",
        "<STMTTRN>",
        "<TRNTYPE>PAYMENT",
        "<DTPOSTED>20261125",
        "<TRNAMT>-150.00",
        "<FITID>20261125005",
        "<CHECKNUM>000123",
        "<NAME>PAGTO BOLETO",
        "<MEMO>Papelaria Boa Vista",
        "</STMTTRN>",
        "</BANKTRANLIST>",
        "<LEDGERBAL>",
        "<BALAMT>1307.10",
        "<DTASOF>20261130",
        "</LEDGERBAL>",
        "</STMTRS>",
        "</STMTTRNRS>",
        "</BANKMSGSRSV1>",
        "</OFX>",
    ] {
        // cp1252: é and Á are one byte each.
        text.extend(line.chars().map(|c| u8::try_from(u32::from(c)).unwrap()));
        text.extend_from_slice(b"\r\n");
    }
    text
}

const CSV: &str = "Extrato conta corrente\n\
Agência 1234 Conta 56789-0\n\
Data;Descrição;Valor\n\
01/11/2026;SALDO ANTERIOR;10.000,00\n\
03/11/2026;Uber *viagem;-23,50\n\
04/11/2026;Pix recebido cliente;2.300,00\n\
04/11/2026;Pix recebido cliente;2.300,00\n\
05/11/2026;Tarifa;abc\n";

/// Uploads `bytes` as `file_name` through the tool and answers the attachment's id.
async fn upload(h: &Harness, file_name: &str, mime_type: &str, bytes: &[u8]) -> String {
    let arguments = json!({"file_name": file_name, "mime_type": mime_type,
                           "content_base64": base64::engine::general_purpose::STANDARD.encode(bytes)});
    let reply = h.send(call("finance_attachments_upload", arguments).bearer(&h.token(DEMO_OWNER)).build()).await;
    let uploaded = &reply.result()["structuredContent"];
    uploaded["id"].as_str().unwrap_or_else(|| panic!("{}", reply.result())).to_string()
}

fn path(account: &str) -> String {
    format!("/v1/financial-accounts/{account}/statement-imports")
}

async fn import(h: &Harness, account: &str, attachment: &str) -> Reply {
    send(h, Method::POST, &path(account), &h.api_token(DEMO_OWNER), Some(json!({"attachment_id": attachment}))).await
}

async fn get(h: &Harness, path: &str) -> Value {
    let reply = send(h, Method::GET, path, &h.api_token(DEMO_OWNER), None).await;
    assert_eq!(reply.status, 200, "{path}: {}", text(&reply));
    reply.json()
}

/// The refused lines of an import's answer: (line, reason).
fn refusals(report: &Value) -> Vec<(u64, &str)> {
    let refused = report["refused"].as_array().unwrap();
    refused.iter().map(|r| (r["line"].as_u64().unwrap(), r["reason"].as_str().unwrap())).collect()
}

async fn balance(h: &Harness) -> String {
    get(h, &format!("/v1/financial-accounts/{ACME_CHECKING_ACCOUNT}")).await["balance"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn an_ofx_statement_becomes_the_accounts_transactions_once() {
    let h = Harness::with_demo().await;
    // A rule renames the bank's Pix text (the statement's description is not the user's).
    let rule = json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "pix recebido",
                      "set_description": "Recebimento Pix", "set_person_id": ACME_CUSTOMER_MARIA});
    assert_eq!(send(&h, Method::POST, "/v1/automatic-rules", &h.api_token(DEMO_OWNER), Some(rule)).await.status, 201);
    let attachment = upload(&h, "extrato-itau-novembro.ofx", "application/x-ofx", &ofx()).await;
    let before = balance(&h).await;
    let reply = import(&h, ACME_CHECKING_ACCOUNT, &attachment).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    let report = reply.json();
    assert_eq!(
        (
            report["format"].as_str(),
            report["movements"].as_u64(),
            report["created"].as_u64(),
            report["duplicates"].as_u64()
        ),
        (Some("ofx"), Some(3), Some(3), Some(0)),
        "{report}"
    );
    let refused = refusals(&report);
    assert_eq!(refused, [(37, "missing_id"), (43, "invalid_date")], "{report}");
    let ids: Vec<&str> = report["transaction_ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let [uber, pix, boleto] = ids[..] else { panic!("{report}") };

    let uber = get(&h, &format!("/v1/financial-transactions/{uber}")).await;
    assert_eq!(
        (uber["type"].as_str(), uber["amount"].as_str(), uber["occurred_at"].as_str()),
        (Some("debit"), Some("42.90"), Some("2026-11-20"))
    );
    assert_eq!(
        (uber["description"].as_str(), uber["category_id"].as_str()),
        (Some("UBER *TRIP HELP.UBER.COM"), Some(OPERATING_EXPENSES))
    );
    assert_eq!(uber["classification_center_allocations"][0]["classification_center_id"], ACME_ADMIN_COST_CENTER);
    // An import's rows (SPEC §5), written for the user who imported them.
    assert_eq!(
        (uber["created_via"].as_str(), uber["created_by"].as_str(), uber["is_pending"].as_bool()),
        (Some("system"), Some(DEMO_OWNER), Some(false))
    );
    let pix = get(&h, &format!("/v1/financial-transactions/{pix}")).await;
    assert_eq!(
        (pix["type"].as_str(), pix["amount"].as_str(), pix["description"].as_str(), pix["person_id"].as_str()),
        (Some("credit"), Some("1500.00"), Some("Recebimento Pix"), Some(ACME_CUSTOMER_MARIA))
    );
    assert_eq!(pix["bank_description"], "PIX RECEBIDO José Ávila", "cp1252 decoded; the bank's text kept");
    let boleto = get(&h, &format!("/v1/financial-transactions/{boleto}")).await;
    assert_eq!(
        (boleto["description"].as_str(), boleto["notes"].as_str(), boleto["document"].as_str()),
        (Some("PAGTO BOLETO"), Some("Papelaria Boa Vista"), Some("000123"))
    );
    let cents = |text: &str| -> i64 { text.replace('.', "").parse().unwrap() };
    let moved = cents(&balance(&h).await) - cents(&before);
    assert_eq!(moved, 150_000 - 4_290 - 15_000, "the balance moves by the posted movements");

    // The same file again, through the tool: nothing new.
    let transactions =
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE financial_account_id = $1", ACME_CHECKING_ACCOUNT)
            .await;
    let arguments = json!({"id": ACME_CHECKING_ACCOUNT, "attachment_id": attachment});
    let again = h.send(call("finance_accounts_import_statement", arguments).bearer(&h.token(DEMO_OWNER)).build()).await;
    let again = &again.result()["structuredContent"];
    assert_eq!((again["created"].as_u64(), again["duplicates"].as_u64()), (Some(0), Some(3)), "{again}");
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE financial_account_id = $1", ACME_CHECKING_ACCOUNT)
            .await,
        transactions
    );
    // The statement's id of a movement is unique in its account, whatever writes it (the
    // guarantee behind two imports racing: the second one is 409 and writes nothing).
    let copy = sql::query(
        "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents,
                                             occurred_at, transaction_type, statement_fitid, created_at, updated_at,
                                             created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Cópia', 4290, '2026-11-20', 'debit', '20261120001', $5, $5, 'system', 'system')",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(DEMO_WORKSPACE_ACME)
    .bind(ACME_COMPANY)
    .bind(ACME_CHECKING_ACCOUNT)
    .bind("2026-12-01T00:00:00Z")
    .execute(&h.state.db)
    .await;
    assert!(copy.is_err_and(|e| e.is_unique_violation()), "a second row of movement 20261120001");
    // Every audit line names the door the import came through, the rows' too.
    let system = "SELECT COUNT(*) FROM audit_events WHERE user_id = $1 AND channel = 'system'";
    assert_eq!(count(&h, system, DEMO_OWNER).await, 0);
    // One audit line per import, one per created transaction.
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE action = $1", "financial_accounts.import_statement").await,
        2
    );
}

#[tokio::test]
async fn a_bank_csv_skips_balances_and_keeps_identical_rows_apart() {
    let h = Harness::with_demo().await;
    let attachment = upload(&h, "extrato.csv", "text/csv", CSV.as_bytes()).await;
    let reply = import(&h, ACME_CHECKING_ACCOUNT, &attachment).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    let report = reply.json();
    assert_eq!((report["format"].as_str(), report["created"].as_u64()), (Some("csv"), Some(3)), "{report}");
    assert_eq!(
        report["refused"],
        json!([{"line": 8, "reason": "invalid_amount", "message": report["refused"][0]["message"]}])
    );
    let ids = report["transaction_ids"].as_array().unwrap();
    let ride = get(&h, &format!("/v1/financial-transactions/{}", ids[0].as_str().unwrap())).await;
    assert_eq!((ride["amount"].as_str(), ride["category_id"].as_str()), (Some("23.50"), Some(OPERATING_EXPENSES)));
    // Two identical rows are two movements, and a re-import knows both.
    let again = import(&h, ACME_CHECKING_ACCOUNT, &attachment).await.json();
    assert_eq!((again["created"].as_u64(), again["duplicates"].as_u64()), (Some(0), Some(3)), "{again}");
}

#[tokio::test]
async fn what_cannot_be_imported_changes_nothing() {
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    let statement = upload(&h, "extrato.ofx", "application/x-ofx", &ofx()).await;
    let pdf = upload(
        &h,
        "nota.pdf",
        "application/pdf",
        b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
    )
    .await;
    let before = count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE id <> $1", "").await;
    for (account, body, status, field, reason) in [
        (ACME_CHECKING_ACCOUNT, json!({"attachment_id": pdf}), 422, "attachment_id", "invalid_statement"),
        (ACME_CHECKING_ACCOUNT, json!({"attachment_id": BETA_ATTACHMENT}), 422, "attachment_id", "invalid_reference"),
        (ACME_CHECKING_ACCOUNT, json!({"attachment_id": "nope"}), 422, "attachment_id", "invalid_uuid"),
        (ACME_CHECKING_ACCOUNT, json!({}), 422, "attachment_id", "required"),
    ] {
        let reply = send(&h, Method::POST, &path(account), &token, Some(body.clone())).await;
        assert_eq!((reply.status.as_u16(), details(&reply)), (status, pair(field, reason)), "{body}: {}", text(&reply));
    }
    // The statement is Itaú's (BANKID 0341) account 12345-6: not another bank's account,
    // nor another number; the right number, with or without its digit, is taken.
    let bradesco = create_at(
        &h,
        "/v1/financial-accounts",
        &token,
        json!({"company_id": ACME_COMPANY, "name": "Bradesco", "type": "checking", "bank_code": "237"}),
    )
    .await;
    let reply = send(
        &h,
        Method::POST,
        &path(bradesco["id"].as_str().unwrap()),
        &token,
        Some(json!({"attachment_id": statement})),
    )
    .await;
    assert_eq!(
        (reply.status.as_u16(), details(&reply)),
        (422, pair("attachment_id", "account_mismatch")),
        "{}",
        text(&reply)
    );
    assert_eq!(reply.json()["error"]["details"]["statement"], json!({"bank_id": "0341", "account_id": "12345-6"}));
    let reply = send(&h, Method::POST, &path(BETA_ACCOUNT), &token, Some(json!({"attachment_id": statement}))).await;
    assert_eq!(reply.status, 404, "another workspace's account is not found");
    let viewer = h.api_token(DEMO_VIEWER);
    let reply =
        send(&h, Method::POST, &path(ACME_CHECKING_ACCOUNT), &viewer, Some(json!({"attachment_id": statement}))).await;
    assert_eq!(reply.status, 403);
    // A closed period refuses its lines, and only them.
    close_period(&h, &token, ACME_COMPANY, "2026-11-21").await;
    let report = import(&h, ACME_CHECKING_ACCOUNT, &statement).await.json();
    let refused = refusals(&report);
    assert_eq!(refused, [(23, "period_closed"), (30, "period_closed"), (37, "missing_id"), (43, "invalid_date")]);
    assert_eq!(report["created"], 1);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE id <> $1", "").await, before + 1);
    // Imported before the period closed, a movement is a duplicate, not a refusal.
    close_period(&h, &token, ACME_COMPANY, "2026-11-30").await;
    let again = import(&h, ACME_CHECKING_ACCOUNT, &statement).await.json();
    assert_eq!(
        refusals(&again),
        [(23, "period_closed"), (30, "period_closed"), (37, "missing_id"), (43, "invalid_date")]
    );
    assert_eq!((again["created"].as_u64(), again["duplicates"].as_u64()), (Some(0), Some(1)), "{again}");
    let checking = format!("/v1/financial-accounts/{ACME_CHECKING_ACCOUNT}");
    for (number, digit, status) in
        [("55555", None, 422), ("12345", Some("6"), 200), ("0012345", None, 200), ("12346", None, 422)]
    {
        let patch = json!({"account_number": number, "account_digit": digit});
        assert_eq!(send(&h, Method::PATCH, &checking, &token, Some(patch)).await.status, 200);
        let reply = import(&h, ACME_CHECKING_ACCOUNT, &statement).await;
        assert_eq!(reply.status, status, "{number}-{digit:?}: {}", text(&reply));
        if status == 422 {
            assert_eq!(details(&reply), pair("attachment_id", "account_mismatch"), "{number}");
        }
    }
}

/// What `make run` shows, through the tools: the demo's November statement imports (its
/// Uber ride filled by the demo's rule), its Pix is suggested for the stationery bill with
/// the reasons, and the reconciliation settles that bill from it.
#[tokio::test]
async fn the_demo_statement_imports_is_suggested_and_reconciles_the_stationery_bill() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_OWNER);
    let tool = |name: &str, arguments: Value| call(name, arguments).bearer(&token).build();
    let range = json!({"account_id": ACME_CHECKING_ACCOUNT, "from": "2026-11-01", "to": "2026-11-30"});
    let none = h.send(tool("finance_reconciliations_suggest", range.clone())).await.result();
    assert_eq!(none["structuredContent"]["data"], json!([]), "nothing to reconcile before the import");
    let arguments = json!({"id": ACME_CHECKING_ACCOUNT, "attachment_id": ACME_NOVEMBER_STATEMENT});
    let report =
        h.send(tool("finance_accounts_import_statement", arguments)).await.result()["structuredContent"].clone();
    assert_eq!((report["created"].as_u64(), report["refused"].clone()), (Some(2), json!([])), "{report}");
    let ride = get(&h, &format!("/v1/financial-transactions/{}", report["transaction_ids"][1].as_str().unwrap())).await;
    assert_eq!(
        (ride["category_id"].as_str(), ride["notes"].as_str()),
        (Some(OPERATING_EXPENSES), Some("UBER DO BRASIL TECNOLOGIA"))
    );
    let suggested = h.send(tool("finance_reconciliations_suggest", range)).await.result()["structuredContent"].clone();
    let pix = report["transaction_ids"][0].clone();
    assert_eq!(suggested["data"][0]["transaction_id"], pix, "{suggested}");
    let best = &suggested["data"][0]["matches"][0];
    assert_eq!(best["billing_id"], ACME_SUPPLIES_PENDING, "{suggested}");
    assert_eq!(best["reasons"][0], "same_amount");
    let body = json!({"billings": [{"kind": "payable", "id": ACME_SUPPLIES_PENDING}], "transaction_ids": [pix]});
    let reply = send(&h, Method::POST, "/v1/reconciliations", &h.api_token(DEMO_OWNER), Some(body)).await;
    assert_eq!(reply.status, 201, "{}", text(&reply));
    let bill = get(&h, &format!("/v1/payables/{ACME_SUPPLIES_PENDING}")).await;
    assert_eq!((bill["status"].as_str(), bill["payment_date"].as_str()), (Some("paid"), Some("2026-11-21")));
}
