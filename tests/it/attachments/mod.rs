//! `/v1/attachments`: multipart upload with type and magic-byte checks and the 10 MB
//! limit, download headers, links to payables/receivables/transactions, delete refused
//! while linked, list filters and pagination, isolation, scope and role checks,
//! provenance and audit — on SQLite and PostgreSQL.

use crate::common;

use common::*;
use http::Method;
use serde_json::{json, Value};

const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n";
const BOUNDARY: &str = "----kfin-test-7MA4YWxkTrZu0gW";

/// A `multipart/form-data` body with a `file` part and, optionally, a `title` part.
fn multipart(file_name: &str, content_type: &str, data: &[u8], title: Option<&str>) -> Vec<u8> {
    let mut body = Vec::new();
    if let Some(title) = title {
        body.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n{title}\r\n").as_bytes(),
        );
    }
    body.extend_from_slice(
        format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: {content_type}\r\n\r\n")
            .as_bytes(),
    );
    body.extend_from_slice(data);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

fn upload_raw(token: &str, body: Vec<u8>) -> Mcp {
    Mcp::raw(body)
        .path("/v1/attachments")
        .bearer(token)
        .header("content-type", &format!("multipart/form-data; boundary={BOUNDARY}"))
}

fn upload(token: &str, file_name: &str, content_type: &str, data: &[u8], title: Option<&str>) -> Mcp {
    upload_raw(token, multipart(file_name, content_type, data, title))
}

/// Uploads and returns the new attachment (asserting 201).
async fn uploaded(h: &Harness, token: &str, file_name: &str, content_type: &str, data: &[u8]) -> Value {
    let reply = h.send(upload(token, file_name, content_type, data, None).build()).await;
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.bytes));
    reply.json()
}

fn unprocessable_reason(reply: &Reply) -> String {
    assert_eq!(reply.status, 422, "{}", String::from_utf8_lossy(&reply.bytes));
    let body = reply.json();
    assert_eq!(body["error"]["code"], "unprocessable_entity");
    body["error"]["details"]["reason"].as_str().unwrap_or_default().to_string()
}

/// A billing (payable or receivable) inserted directly: no API creates them here.
async fn insert_billing(h: &Harness, workspace: &str, company: &str, kind: &str) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    sql::query(
        "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date,
                               billing_type, status, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Conta de teste', 15000, '2026-12-10', '2026-12-01', 'normal', 'pending',
                 '2026-11-30T12:00:00Z', '2026-11-30T12:00:00Z', 'system', 'system')",
    )
    .bind(&id)
    .bind(workspace)
    .bind(company)
    .bind(kind)
    .execute(&h.state.db)
    .await
    .unwrap();
    id
}

/// A ledger transaction (and its account) inserted directly.
async fn insert_transaction(h: &Harness, workspace: &str, company: &str) -> String {
    let account = uuid::Uuid::new_v4().to_string();
    sql::query(
        "INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'Conta corrente', 'checking', '2026-11-30T12:00:00Z', '2026-11-30T12:00:00Z', 'system', 'system')",
    )
    .bind(&account)
    .bind(workspace)
    .bind(company)
    .execute(&h.state.db)
    .await
    .unwrap();
    let id = uuid::Uuid::new_v4().to_string();
    sql::query(
        "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents,
                                             occurred_at, transaction_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Tarifa', 990, '2026-11-30', 'debit', '2026-11-30T12:00:00Z', '2026-11-30T12:00:00Z', 'system', 'system')",
    )
    .bind(&id)
    .bind(workspace)
    .bind(company)
    .bind(&account)
    .execute(&h.state.db)
    .await
    .unwrap();
    id
}

fn links_path(id: &str) -> String {
    format!("/v1/attachments/{id}/links")
}

#[tokio::test]
async fn upload_returns_201_with_location_provenance_and_audit() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let reply =
        h.send(upload(&token, "nota-fiscal.pdf", "application/pdf", PDF, Some("NF 1234 — março")).build()).await;
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.bytes));
    let attachment = reply.json();
    let id = attachment["id"].as_str().unwrap().to_string();
    assert_eq!(reply.header("location"), Some(format!("/v1/attachments/{id}").as_str()));
    assert_eq!(attachment["file_name"], "nota-fiscal.pdf");
    assert_eq!(attachment["title"], "NF 1234 — março");
    assert_eq!(attachment["mime_type"], "application/pdf");
    assert_eq!(attachment["file_size"], PDF.len());
    assert_eq!(attachment["uploaded_by"], format!("api:{DEMO_OWNER}"));
    assert!(attachment["uploaded_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(attachment["download_url"], format!("{PUBLIC_URL}/v1/attachments/{id}/download"));
    for field in ["linked_payables_count", "linked_receivables_count", "linked_transactions_count"] {
        assert_eq!(attachment[field], 0, "{field}");
    }
    let keys: Vec<&String> = attachment.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 11, "exactly the documented row: {keys:?}");
    let row = sql::query("SELECT sha256, created_via, created_by, workspace_id FROM attachments WHERE id = $1")
        .bind(&id)
        .fetch_one(&h.state.db)
        .await
        .unwrap();
    let expected: String = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, PDF)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(row.try_get::<String, _>("sha256").unwrap(), expected);
    assert_eq!(row.try_get::<String, _>("created_via").unwrap(), "api");
    assert_eq!(row.try_get::<String, _>("created_by").unwrap(), DEMO_OWNER);
    assert_eq!(row.try_get::<String, _>("workspace_id").unwrap(), DEMO_WORKSPACE_ACME);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'attachments.upload' AND channel = 'api'", &id).await, 1);
    let got = h.send(rest(Method::GET, &format!("/v1/attachments/{id}"), &token, None).build()).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json(), attachment);
}

#[tokio::test]
async fn uploaded_by_names_the_channel_of_the_upload() {
    use kobana_finance_mcp::auth::Identity;
    use kobana_finance_mcp::domain::roles::ScopeSet;
    use kobana_finance_mcp::ops::{attachments, Channel, OpContext};
    let h = Harness::new().await;
    let identity = Identity {
        user_id: DEMO_OWNER.into(),
        scopes: ScopeSet::parse("finance.attachments finance.attachments.write"),
        jti: None,
        client_id: None,
    };
    let memberships = kobana_finance_mcp::storage::identity::memberships(&h.state.db, DEMO_OWNER).await.unwrap();
    let ctx =
        OpContext { state: h.state.services(), identity: &identity, channel: Channel::Mcp, memberships: &memberships };
    let input = attachments::Upload {
        file_name: "extrato.csv".into(),
        content_type: "text/csv".into(),
        title: None,
        content: bytes::Bytes::from_static(b"data,valor\n2026-11-30,10.00\n"),
    };
    let mut tx = h.state.db.begin().await.unwrap();
    let attachment = attachments::upload(&ctx, &mut tx, &memberships[0], input).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(attachment.uploaded_by, format!("mcp:{DEMO_OWNER}"));
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM attachments WHERE id = $1 AND created_via = 'mcp'", &attachment.id).await,
        1
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND channel = 'mcp'", &attachment.id).await,
        1
    );
}

#[tokio::test]
async fn every_supported_type_is_accepted_with_its_extension_and_magic_bytes() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let cases: [(&str, &str, &[u8]); 9] = [
        ("a.pdf", "application/pdf", PDF),
        ("b.PNG", "image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        ("c.jpg", "image/jpeg", b"\xFF\xD8\xFF\xE0\0\x10JFIF\0"),
        ("d.jpeg", "image/jpeg", b"\xFF\xD8\xFF\xDB\0\x43"),
        ("e.xml", "application/xml", b"\xEF\xBB\xBF\n<?xml version=\"1.0\" encoding=\"UTF-8\"?><nfeProc/>"),
        ("f.xml", "text/xml; charset=utf-8", b"<nfe/>"),
        (
            "g.ofx",
            "application/x-ofx",
            b"OFXHEADER:100\r\nDATA:OFXSGML\r\nCHARSET:1252\r\n\r\n<OFX><NAME>Jo\xe3o</NAME></OFX>",
        ),
        ("h.csv", "text/csv", "data;descrição;valor\n2026-11-30;Tarifa;9,90\n".as_bytes()),
        ("i.xlsx", XLSX, b"PK\x03\x04\x14\0\x06\0\x08\0"),
    ];
    for (name, content_type, data) in cases {
        let attachment = uploaded(&h, &token, name, content_type, data).await;
        assert_eq!(attachment["file_size"], data.len(), "{name}");
        let expected_mime = content_type.split(';').next().unwrap();
        assert_eq!(attachment["mime_type"], expected_mime, "{name}");
    }
}

#[tokio::test]
async fn content_type_and_extension_must_name_the_same_supported_type() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let cases: [(&str, &str, &[u8], &str); 6] = [
        ("nota.pdf", "image/png", PDF, "type_mismatch"),
        ("nota.png", "application/pdf", PDF, "type_mismatch"),
        ("foto.gif", "image/gif", b"GIF89a....", "unsupported_type"),
        ("script.exe", "application/pdf", PDF, "unsupported_type"),
        ("nota.pdf", "application/octet-stream", PDF, "unsupported_type"),
        ("nota", "application/pdf", PDF, "unsupported_type"),
    ];
    for (name, content_type, data, reason) in cases {
        let reply = h.send(upload(&token, name, content_type, data, None).build()).await;
        assert_eq!(unprocessable_reason(&reply), reason, "{name} {content_type}");
        assert_eq!(reply.json()["error"]["details"]["field"], "file");
    }
    assert_eq!(count(&h, "SELECT COUNT(*) FROM attachments WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await, 0);
}

#[tokio::test]
async fn magic_bytes_must_match_the_declared_type() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let cases: [(&str, &str, &[u8]); 7] = [
        ("nota.pdf", "application/pdf", b"\x89PNG\r\n\x1a\n"),
        ("foto.png", "image/png", b"%PDF-1.4"),
        ("foto.jpg", "image/jpeg", b"GIF89a"),
        ("planilha.xlsx", XLSX, b"%PDF-1.4"),
        ("nfe.xml", "application/xml", b"nfe without a tag"),
        ("extrato.csv", "text/csv", b"a,b\n\x00\x01\x02binary"),
        ("extrato.ofx", "application/x-ofx", b"\x89PNG\r\n\x1a\n\0\0"),
    ];
    for (name, content_type, data) in cases {
        let reply = h.send(upload(&token, name, content_type, data, None).build()).await;
        assert_eq!(unprocessable_reason(&reply), "type_mismatch", "{name}");
    }
}

#[tokio::test]
async fn empty_file_is_unprocessable() {
    let h = Harness::new().await;
    let reply = h.send(upload(&h.api_token(DEMO_OWNER), "vazio.csv", "text/csv", b"", None).build()).await;
    assert_eq!(unprocessable_reason(&reply), "empty_file");
}

#[tokio::test]
async fn files_over_10_mb_are_too_large_with_the_limit() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    const LIMIT: usize = 10_485_760;
    let mut exactly = PDF.to_vec();
    exactly.resize(LIMIT, b' ');
    let reply = h.send(upload(&token, "grande.pdf", "application/pdf", &exactly, None).build()).await;
    assert_eq!(reply.status, 201, "exactly 10 MB is accepted: {}", String::from_utf8_lossy(&reply.bytes));
    let id = reply.json()["id"].as_str().unwrap().to_string();
    let download = h.send(rest(Method::GET, &format!("/v1/attachments/{id}/download"), &token, None).build()).await;
    assert_eq!(download.bytes.len(), LIMIT);
    assert_eq!(&download.bytes[..], &exactly[..]);

    exactly.push(b' ');
    let reply = h.send(upload(&token, "grande.pdf", "application/pdf", &exactly, None).build()).await;
    assert_eq!(unprocessable_reason(&reply), "too_large");
    assert_eq!(reply.json()["error"]["details"]["limit_bytes"], LIMIT);

    // A body beyond what any 10 MB upload needs is refused without being read.
    let mut huge = PDF.to_vec();
    huge.resize(12 * 1024 * 1024, b' ');
    let reply = h.send(upload(&token, "enorme.pdf", "application/pdf", &huge, None).build()).await;
    assert_eq!(unprocessable_reason(&reply), "too_large");
    assert_eq!(reply.json()["error"]["details"]["limit_bytes"], LIMIT);
    assert_eq!(reply.header("connection"), Some("close"));
    assert_eq!(count(&h, "SELECT COUNT(*) FROM attachments WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await, 1);
}

#[tokio::test]
async fn malformed_multipart_is_a_bad_request() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let good = multipart("a.pdf", "application/pdf", PDF, None);
    let mut truncated = good.clone();
    truncated.truncate(good.len() - BOUNDARY.len() - 10);
    let cases: Vec<(Mcp, &str)> = vec![
        (upload_raw(&token, good.clone()).header("content-type", "application/json"), "not_multipart"),
        (upload_raw(&token, good.clone()).header("content-type", "multipart/form-data"), "missing_boundary"),
        (upload_raw(&token, good.clone()).without("content-type"), "not_multipart"),
        (upload_raw(&token, truncated), "missing_closing_boundary"),
        (upload_raw(&token, b"garbage without any boundary".to_vec()), "missing_boundary"),
        (upload_raw(&token, format!("--{BOUNDARY}--\r\n").into_bytes()), "required"),
        (
            upload_raw(&token, format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"colour\"\r\n\r\nred\r\n--{BOUNDARY}--\r\n").into_bytes()),
            "unknown_field",
        ),
        (
            upload_raw(
                &token,
                format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-\r\n--{BOUNDARY}--\r\n").into_bytes(),
            ),
            "missing_file_name",
        ),
        (
            upload_raw(
                &token,
                format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n\r\n%PDF-\r\n--{BOUNDARY}--\r\n").into_bytes(),
            ),
            "missing_content_type",
        ),
    ];
    for (request, reason) in cases {
        let reply = h.send(request.build()).await;
        assert_eq!(reply.status, 400, "{reason}: {}", String::from_utf8_lossy(&reply.bytes));
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{reason}");
        assert_eq!(reply.json()["error"]["details"]["reason"], reason);
    }
    let long_title = "t".repeat(256);
    let reply = h.send(upload(&token, "a.pdf", "application/pdf", PDF, Some(&long_title)).build()).await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["details"], json!({"field": "title", "reason": "too_long"}));
}

#[tokio::test]
async fn download_streams_the_bytes_with_disposition_and_no_caching() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let pdf = uploaded(&h, &token, "C:\\fakepath\\nota \\\"final\\\".pdf", "application/pdf", PDF).await;
    assert_eq!(pdf["file_name"], "nota \"final\".pdf", "the client's path is dropped");
    let reply = h
        .send(
            rest(Method::GET, &format!("/v1/attachments/{}/download", pdf["id"].as_str().unwrap()), &token, None)
                .build(),
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(&reply.bytes[..], PDF);
    assert_eq!(reply.header("content-type"), Some("application/pdf"));
    assert_eq!(reply.header("content-length"), Some(PDF.len().to_string().as_str()));
    assert_eq!(
        reply.header("content-disposition"),
        Some("inline; filename=\"nota _final_.pdf\"; filename*=UTF-8''nota%20%22final%22.pdf")
    );
    assert_eq!(reply.header("cache-control"), Some("private, no-store"));
    assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));

    let csv_bytes = "data,descrição\n2026-11-30,Tarifa\n".as_bytes();
    let csv = uploaded(&h, &token, "extrato de novembro ção.csv", "text/csv", csv_bytes).await;
    let reply = h
        .send(
            rest(Method::GET, csv["download_url"].as_str().unwrap().strip_prefix(PUBLIC_URL).unwrap(), &token, None)
                .build(),
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(&reply.bytes[..], csv_bytes);
    assert_eq!(reply.header("content-type"), Some("text/csv"));
    assert_eq!(
        reply.header("content-disposition"),
        Some("attachment; filename=\"extrato de novembro __o.csv\"; filename*=UTF-8''extrato%20de%20novembro%20%C3%A7%C3%A3o.csv")
    );
    assert_eq!(reply.header("cache-control"), Some("private, no-store"));

    let missing = h
        .send(rest(Method::GET, "/v1/attachments/7f000000-0000-4000-8000-000000000000/download", &token, None).build())
        .await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"]["code"], "not_found");
}

#[tokio::test]
async fn download_refuses_mcp_tokens() {
    let h = Harness::new().await;
    let attachment = uploaded(&h, &h.api_token(DEMO_OWNER), "a.pdf", "application/pdf", PDF).await;
    let path = format!("/v1/attachments/{}/download", attachment["id"].as_str().unwrap());
    let reply = h.send(rest(Method::GET, &path, &h.token(DEMO_OWNER), None).build()).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.json()["error"]["code"], "invalid_token");
    assert!(reply.header("www-authenticate").is_some());
    assert!(!reply.bytes.windows(5).any(|w| w == b"%PDF-"), "no bytes leak");
}

#[tokio::test]
async fn links_to_payables_receivables_and_transactions_are_counted() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let attachment = uploaded(&h, &token, "a.pdf", "application/pdf", PDF).await;
    let id = attachment["id"].as_str().unwrap().to_string();
    let payable = insert_billing(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY, "payable").await;
    let receivable = insert_billing(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY, "receivable").await;
    let transaction = insert_transaction(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY).await;
    for (kind, target) in [("payable", &payable), ("receivable", &receivable), ("transaction", &transaction)] {
        let reply = h
            .send(rest(Method::POST, &links_path(&id), &token, Some(json!({"type": kind, "id": target}))).build())
            .await;
        assert_eq!(reply.status, 201, "{kind}: {}", String::from_utf8_lossy(&reply.bytes));
        assert_eq!(reply.json(), json!({"attachment_id": id, "parent_type": kind, "parent_id": target}));
    }
    let got = h.send(rest(Method::GET, &format!("/v1/attachments/{id}"), &token, None).build()).await.json();
    assert_eq!(
        (
            got["linked_payables_count"].as_i64(),
            got["linked_receivables_count"].as_i64(),
            got["linked_transactions_count"].as_i64()
        ),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'attachments.link'", &id).await,
        3
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM attachment_links WHERE attachment_id = $1 AND created_via = 'api'", &id).await,
        3
    );

    let again = h
        .send(rest(Method::POST, &links_path(&id), &token, Some(json!({"type": "payable", "id": payable}))).build())
        .await;
    assert_eq!(again.status, 409);
    assert_eq!(again.json()["error"]["code"], "conflict");

    let unlinked = h
        .send(
            rest(Method::DELETE, &links_path(&id), &token, Some(json!({"type": "receivable", "id": receivable})))
                .build(),
        )
        .await;
    assert_eq!(unlinked.status, 204);
    let twice = h
        .send(
            rest(Method::DELETE, &links_path(&id), &token, Some(json!({"type": "receivable", "id": receivable})))
                .build(),
        )
        .await;
    assert_eq!(twice.status, 404);
    assert_eq!(twice.json()["error"]["code"], "not_found");
    // The payable is linked, but not as a receivable.
    let wrong_type = h
        .send(
            rest(Method::DELETE, &links_path(&id), &token, Some(json!({"type": "receivable", "id": payable}))).build(),
        )
        .await;
    assert_eq!(wrong_type.status, 404);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'attachments.unlink'", &id)
            .await,
        1
    );
    let got = h.send(rest(Method::GET, &format!("/v1/attachments/{id}"), &token, None).build()).await.json();
    assert_eq!(got["linked_receivables_count"], 0);
}

#[tokio::test]
async fn link_target_must_exist_in_the_workspace_with_that_kind() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let id = uploaded(&h, &token, "a.pdf", "application/pdf", PDF).await["id"].as_str().unwrap().to_string();
    let payable = insert_billing(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY, "payable").await;
    let beta_payable = insert_billing(&h, DEMO_WORKSPACE_BETA, BETA_COMPANY, "payable").await;
    let beta_transaction = insert_transaction(&h, DEMO_WORKSPACE_BETA, BETA_COMPANY).await;
    let cases = [
        json!({"type": "receivable", "id": payable}),
        json!({"type": "transaction", "id": payable}),
        json!({"type": "payable", "id": beta_payable}),
        json!({"type": "transaction", "id": beta_transaction}),
        json!({"type": "payable", "id": MISSING}),
    ];
    for body in cases {
        let reply = h.send(rest(Method::POST, &links_path(&id), &token, Some(body.clone())).build()).await;
        assert_eq!(reply.status, 404, "{body}");
        assert_eq!(reply.json()["error"]["code"], "not_found", "{body}");
    }
    let bad = [
        (json!({"type": "payable", "id": "not-a-uuid"}), "id", "invalid_uuid"),
        (json!({"type": "invoice", "id": payable}), "type", "invalid_value"),
        (json!({"id": payable}), "type", "required"),
        (json!({"type": "payable", "id": payable, "extra": 1}), "extra", "unknown_field"),
    ];
    for (body, field, reason) in bad {
        let reply = h.send(rest(Method::POST, &links_path(&id), &token, Some(body.clone())).build()).await;
        assert_eq!(reply.status, 422, "{body}");
        let details = &reply.json()["error"]["details"];
        assert_eq!((details["field"].as_str(), details["reason"].as_str()), (Some(field), Some(reason)), "{body}");
    }
    assert_eq!(count(&h, "SELECT COUNT(*) FROM attachment_links WHERE attachment_id = $1", &id).await, 0);
}

#[tokio::test]
async fn link_with_an_idempotency_key_replays() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let id = uploaded(&h, &token, "a.pdf", "application/pdf", PDF).await["id"].as_str().unwrap().to_string();
    let payable = insert_billing(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY, "payable").await;
    let send = || {
        rest(Method::POST, &links_path(&id), &token, Some(json!({"type": "payable", "id": payable})))
            .header("x-idempotency-key", "link-1")
            .build()
    };
    let first = h.send(send()).await;
    assert_eq!(first.status, 201);
    let again = h.send(send()).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.header("x-idempotency-replayed"), Some("true"));
    assert_eq!(again.json(), first.json());
    assert_eq!(count(&h, "SELECT COUNT(*) FROM attachment_links WHERE attachment_id = $1", &id).await, 1);
}

#[tokio::test]
async fn upload_is_not_idempotent() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for _ in 0..2 {
        let reply = h
            .send(upload(&token, "a.pdf", "application/pdf", PDF, None).header("x-idempotency-key", "same").build())
            .await;
        assert_eq!(reply.status, 201);
        assert!(reply.header("x-idempotency-replayed").is_none());
    }
    assert_eq!(count(&h, "SELECT COUNT(*) FROM attachments WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await, 2);
}

#[tokio::test]
async fn delete_is_refused_while_linked_with_the_usage() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let id = uploaded(&h, &token, "a.pdf", "application/pdf", PDF).await["id"].as_str().unwrap().to_string();
    let payable = insert_billing(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY, "payable").await;
    let first = insert_transaction(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY).await;
    let second = insert_transaction(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY).await;
    for (kind, target) in [("payable", &payable), ("transaction", &first), ("transaction", &second)] {
        let reply = h
            .send(rest(Method::POST, &links_path(&id), &token, Some(json!({"type": kind, "id": target}))).build())
            .await;
        assert_eq!(reply.status, 201);
    }
    let path = format!("/v1/attachments/{id}");
    let refused = h.send(rest(Method::DELETE, &path, &token, None).build()).await;
    assert_eq!(unprocessable_reason(&refused), "in_use");
    assert_eq!(
        refused.json()["error"]["details"]["usage"],
        json!({"payables": 1, "receivables": 0, "transactions": 2})
    );
    assert_eq!(h.send(rest(Method::GET, &path, &token, None).build()).await.status, 200);

    for (kind, target) in [("payable", &payable), ("transaction", &first), ("transaction", &second)] {
        let reply = h
            .send(rest(Method::DELETE, &links_path(&id), &token, Some(json!({"type": kind, "id": target}))).build())
            .await;
        assert_eq!(reply.status, 204);
    }
    assert_eq!(h.send(rest(Method::DELETE, &path, &token, None).build()).await.status, 204);
    assert_eq!(h.send(rest(Method::DELETE, &path, &token, None).build()).await.status, 404);
    assert_eq!(h.send(rest(Method::GET, &format!("{path}/download"), &token, None).build()).await.status, 404);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM attachments WHERE id = $1", &id).await, 0, "the bytes go with the row");
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'attachments.delete'", &id)
            .await,
        1
    );
}

mod listing;
mod over_tcp;
