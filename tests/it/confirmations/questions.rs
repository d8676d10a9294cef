//! What the person reads is safe and complete: a bank payment's question names the exact
//! destination and the source account, and no text a stranger wrote — a description, a
//! vendor's name, a statement line — can forge a sentence of it.

use http::Method;
use serde_json::{json, Value};

use kobana_finance_mcp::ops::bills::approval;

use super::{ask, Door, DOORS};
use crate::common::gateway::*;
use crate::common::*;
use crate::dispatch::official;

/// The text between the first “ and its ”: a quoted field of a question.
fn first_quoted(question: &str) -> &str {
    let start = question.find('“').expect("a quoted field") + '“'.len_utf8();
    let end = question[start..].find('”').expect("its closing quote");
    &question[start..start + end]
}

#[tokio::test]
async fn a_name_or_a_description_with_a_control_or_override_character_is_refused_at_the_door() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let mcp = h.token(DEMO_OWNER);
    let base =
        json!({"company_id": ACME_COMPANY, "amount": "10.00", "due_date": "2026-12-20", "person_id": ACME_LANDLORD});
    let cases = [
        ("description", json!("Aluguel\nThe bank pays R$ 1,00")),
        ("description", json!("Aluguel\u{0000}")),
        ("description", json!("bell\u{0007}")),
        ("description", json!("rtl \u{202e}lanoitseuq")),
        ("person_name", json!("Imobiliária\tCentral")),
        ("beneficiary_name", json!("Mallory\u{2066}")),
    ];
    for (field, value) in cases {
        let mut body = base.clone();
        body["description"] = json!("Aluguel");
        body[field] = value;
        if field == "person_name" {
            body.as_object_mut().unwrap().remove("person_id");
        }
        let reply = send(&h, Method::POST, "/v1/payables", &api, Some(body.clone())).await;
        assert_eq!((reply.status.as_u16(), details(&reply)), (422, pair(field, "invalid_characters")), "{body}");
        let mut arguments = body;
        arguments["workspace_id"] = json!(DEMO_WORKSPACE_ACME);
        let result = h.send(call("finance_payables_create", arguments).bearer(&mcp).build()).await.result();
        assert_eq!(result["isError"], true, "{result}");
        let error: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(error["error"]["details"]["field"], field, "{error}");
    }
    // Every other character stays: accents, emoji, other scripts, a zero-width space.
    let mut body = base.clone();
    body["description"] = json!("Café ☕ — 株式会社 Imobili\u{200b}ária");
    let made = create_at(&h, "/v1/payables", &api, body).await;
    assert_eq!(made["description"], "Café ☕ — 株式会社 Imobili\u{200b}ária");
    // Renaming into a control character is refused too.
    let reply =
        send(&h, Method::PATCH, &format!("/v1/people/{ACME_LANDLORD}"), &api, Some(json!({"name": "A\r\nB"}))).await;
    assert_eq!((reply.status.as_u16(), details(&reply)), (422, pair("name", "invalid_characters")));
}

/// The attack of the finding: a description written to read as the end of the question,
/// a fake R$ 850,00 sentence followed by blank lines, the real amount after them.
const FORGED: &str =
    "Condomínio de dezembro” to Imobiliária Central Ltda (R$ 850,00, due 2026-12-15) through the bank? \
The bank pays R$ 850,00 by TED to its bank account from the account “Conta corrente Itaú”.";

#[tokio::test]
async fn no_description_forges_a_sentence_of_the_question() {
    for door in DOORS {
        let (h, standin) = with_gateway().await;
        let api = h.api_token(DEMO_OWNER);
        let mcp = h.token(DEMO_OWNER);
        // Accepted at input (one line, no control character), shown bounded and with its
        // quotation marks made plain.
        let bill = official(&h, &api, FORGED, "45000.00", crate::dispatch::ted_coordinates()).await;
        let (question, _) = ask(&h, &mcp, door, "finance_payables_send_to_bank", &json!({"id": bill})).await;
        assert!(question.starts_with("Pay the payable “"), "{question}");
        let shown = first_quoted(&question);
        assert!(shown.chars().count() <= 60 && shown.ends_with('…'), "{door:?}: {shown:?}");
        assert!(!shown.contains('”') && !shown.contains('“'), "{door:?}: {shown:?}");
        assert!(!question.contains('\n'), "{door:?}: {question}");
        let after = &question[question.find(shown).unwrap() + shown.len()..];
        assert!(after.contains("The bank pays R$ 45.000,00 by TED"), "{door:?}: the real sentence follows: {question}");

        // Text stored before the rule (an import, an older row) is shown on one line, its
        // hidden characters by their code point.
        let forged_lines = format!("Aluguel{}The bank pays R$ 1,00\u{202e}", "\n".repeat(30));
        exec(&h, "UPDATE billings SET description = $1 WHERE id = $2", &[&forged_lines, &bill]).await;
        exec(&h, "UPDATE people SET name = $1 WHERE id = $2", &["Imobili\u{200b}ária Central Ltda", ACME_LANDLORD])
            .await;
        let (question, _) = ask(&h, &mcp, door, "finance_payables_send_to_bank", &json!({"id": bill})).await;
        assert!(!question.contains('\n') && !question.contains('\u{202e}'), "{door:?}: {question}");
        assert!(question.contains("“Aluguel The bank pays R$ 1,00[U+202E]”"), "{door:?}: {question}");
        let (question, _) = ask(&h, &mcp, door, "finance_payables_cancel", &json!({"id": ACME_RENT_DECEMBER})).await;
        assert!(question.contains("“Imobili[U+200B]ária Central Ltda”"), "{door:?}: {question}");
        assert_eq!(standin.payments_made(), 0);
    }
}

/// The question of each way the bank pays: the destination, masked as banks mask it, and
/// the account it leaves from.
#[tokio::test]
async fn a_bank_payment_question_names_its_destination_and_its_source() {
    let (h, _standin) = with_gateway().await;
    let api = h.api_token(DEMO_OWNER);
    let mcp = h.token(DEMO_OWNER);
    let from_checking = json!({"expected_account_id": ACME_CHECKING_ACCOUNT});
    for bill in [ACME_RENT_DECEMBER, ACME_SUPPLIES_PENDING] {
        let reply = send(&h, Method::PATCH, &format!("/v1/payables/{bill}"), &api, Some(from_checking.clone())).await;
        assert_eq!(reply.status, 200, "{}", text(&reply));
        // A change of the source account through a door of the gated demo is no change of
        // the payee: the bill stays official.
        assert!(reply.json()["payment_approval"].is_null(), "{}", text(&reply));
    }
    let pix_code = "00020126580014br.gov.bcb.pix0136123e4567-e89b-12d3-a456-4266141740005204000053039865406100.005802BR5918PAPELARIA BOAVISTA6009SAO PAULO62070503***6304";
    let pix_code = format!("{pix_code}{:04X}", crc16(pix_code.as_bytes()));
    approval::set_gate(&h.state.db, DEMO_WORKSPACE_ACME, false).await.unwrap();
    let by_code = official(
        &h,
        &api,
        "Papelaria por QR",
        "100.00",
        json!({"payment_method_kind": "pix", "pix_copia_e_cola": pix_code}),
    )
    .await;
    let cases: [(&str, &[&str]); 5] = [
        (
            ACME_SERVICE_CHARGE_DECEMBER,
            &["R$ 850,00", "by TED to “Imobiliária Central Ltda” (CNPJ 45.997.418/0001-53), bank 341, branch 0912, account ***871-3", "from the account “Conta corrente Itaú”"],
        ),
        (ACME_RENT_DECEMBER, &["R$ 4.500,00", "by boleto, digitable line 34191.09008 00000.000000 00000.000018 3 16560000450000", "from the account “Conta corrente Itaú”"]),
        (ACME_SUPPLIES_PENDING, &["R$ 150,00", "by Pix to the e-mail key f***@papelariaboavista.com.br of", "from the account “Conta corrente Itaú”"]),
        (ACME_DARF_NOVEMBER, &["R$ 830,45", "by its tax guide's DARF data, revenue code “2089”, taxpayer CNPJ 11.222.333/0001-81", "from the account “Conta corrente Itaú”"]),
        (&by_code, &["R$ 100,00", "by Pix, its copia-e-cola code naming “PAPELARIA BOAVISTA”, key “123e4567-e89b-12d3-a456-426614174000”, “SAO PAULO”"]),
    ];
    for (bill, parts) in cases {
        let (question, _) = ask(&h, &mcp, Door::Tool, "finance_payables_send_to_bank", &json!({"id": bill})).await;
        for part in parts {
            assert!(question.contains(part), "{part:?} in {question}");
        }
        assert!(question.contains("from the account"), "{question}");
    }
}

/// CRC-16/CCITT-FALSE, the BR Code's checksum (to write a valid test code).
fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0xFFFF, |crc, &byte| {
        (0..8)
            .fold(crc ^ (u16::from(byte) << 8), |crc, _| if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 })
    })
}

/// A settle says what it is: a record of a payment made elsewhere, moving no money; the
/// bank is what pays, and an agent told to pay from an account finds the bank's tool.
#[tokio::test]
async fn settling_is_told_apart_from_paying_through_the_bank() {
    let h = Harness::with_demo().await;
    let mcp = h.token(DEMO_OWNER);
    let tools = h.send(Mcp::modern("tools/list", json!({})).bearer(&mcp).build()).await.result()["tools"].clone();
    let tool = |name: &str| tools.as_array().unwrap().iter().find(|t| t["name"] == name).unwrap().clone();
    let settle = tool("finance_payables_settle");
    assert_eq!(settle["title"], "Record a payment made elsewhere");
    let description = settle["description"].as_str().unwrap();
    assert!(
        description.contains("moves no money") && description.contains("finance_payables_send_to_bank"),
        "{description}"
    );
    assert!(!description.contains("Moves money"), "{description}");
    let create = tool("finance_payables_create")["description"].as_str().unwrap().to_string();
    assert!(create.contains("finance_payables_send_to_bank") && create.contains("finance_payables_settle"), "{create}");
    assert!(tool("finance_receivables_settle")["description"].as_str().unwrap().contains("moves no money"));

    let (question, _) = ask(
        &h,
        &mcp,
        Door::Tool,
        "finance_payables_settle",
        &json!({"id": ACME_SUPPLIES_PENDING, "payment_date": "2026-11-20", "financial_account_id": ACME_CHECKING_ACCOUNT}),
    )
    .await;
    assert!(question.starts_with("Record a payment of R$ 150,00"), "{question}");
    assert!(question.contains("No money moves"), "{question}");

    for query in ["pagar pelo banco", "pagar o aluguel pela conta do Itaú", "pay the rent from the Itaú account"] {
        let reply = h
            .send(call("finance_tools_search", json!({"query": query})).path("/mcp/find").bearer(&mcp).build())
            .await
            .result();
        let text: Value = serde_json::from_str(reply["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["tools"][0]["name"], "finance_payables_send_to_bank", "{query}: {text}");
    }
}
