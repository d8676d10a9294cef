//! What the real API documents on its answers: a `Request-Id` on every answer, and on
//! reads an `ETag` (and a record's `Last-Modified`) that `If-None-Match` and
//! `If-Modified-Since` turn into `304 Not Modified` while nothing changed.

use std::collections::HashSet;
use std::time::Duration;

use crate::common;

use common::*;
use http::Method;
use serde_json::json;

#[tokio::test]
async fn every_answer_carries_a_request_id_of_its_own() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let answers = [
        h.send(rest(Method::GET, "/v1/companies", &api, None).build()).await,
        h.send(rest(Method::GET, "/v1/no-such-route", &api, None).build()).await,
        h.send(rest(Method::GET, "/v1/companies", "not-a-token", None).build()).await,
        h.send(Mcp::modern("tools/list", json!({})).bearer(&h.token(DEMO_OWNER)).build()).await,
        h.send(Mcp::modern("tools/list", json!({})).bearer("not-a-token").build()).await,
    ];
    let statuses: Vec<u16> = answers.iter().map(|a| a.status.as_u16()).collect();
    assert_eq!(statuses, [200, 404, 401, 200, 401]);
    let ids: HashSet<&str> = answers.iter().map(|a| a.header("request-id").expect("a Request-Id")).collect();
    assert_eq!(ids.len(), answers.len(), "each answer has its own id: {ids:?}");
    for id in ids {
        assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
    }
}

#[tokio::test]
async fn a_record_read_answers_304_while_it_is_unchanged() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let path = format!("/v1/companies/{ACME_COMPANY}");
    let get = |headers: &[(&str, &str)]| {
        let mut request = rest(Method::GET, &path, &api, None);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        request.build()
    };
    let first = h.send(get(&[])).await;
    assert_eq!(first.status, 200);
    let tag = first.header("etag").expect("an ETag").to_string();
    let modified = first.header("last-modified").expect("a Last-Modified").to_string();
    let updated_at = httpdate::parse_http_date(&modified).unwrap();
    assert_eq!(
        kobana_finance_mcp::domain::dates::Timestamp::parse(first.json()["updated_at"].as_str().unwrap())
            .unwrap()
            .unix(),
        updated_at.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64,
        "Last-Modified is the record's updated_at"
    );

    let same = h.send(get(&[("if-none-match", &tag)])).await;
    assert_eq!(same.status, 304);
    assert!(same.bytes.is_empty(), "a 304 has no body");
    assert_eq!(same.header("etag"), Some(tag.as_str()));
    assert!(same.header("request-id").is_some());
    assert_eq!(h.send(get(&[("if-none-match", &format!("\"other\", W/{tag}"))])).await.status, 304);
    assert_eq!(h.send(get(&[("if-modified-since", &modified)])).await.status, 304);

    let other = h.send(get(&[("if-none-match", "\"other\"")])).await;
    assert_eq!((other.status.as_u16(), &other.bytes), (200, &first.bytes));
    // With If-None-Match, If-Modified-Since is not looked at.
    assert_eq!(h.send(get(&[("if-none-match", "\"other\""), ("if-modified-since", &modified)])).await.status, 200);
    let before = httpdate::fmt_http_date(updated_at - Duration::from_secs(1));
    assert_eq!(h.send(get(&[("if-modified-since", &before)])).await.status, 200);

    let renamed = h.send(rest(Method::PATCH, &path, &api, Some(json!({"name": "Acme Renomeada"}))).build()).await;
    assert_eq!(renamed.status, 200);
    let after = h.send(get(&[("if-none-match", &tag)])).await;
    assert_eq!(after.status, 200, "a changed record is answered whole");
    assert_ne!(after.header("etag"), Some(tag.as_str()));
    assert_eq!(after.json()["name"], "Acme Renomeada");
}

#[tokio::test]
async fn a_list_has_a_tag_and_writes_and_errors_have_none() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let list = h.send(rest(Method::GET, "/v1/payables?limit=2", &api, None).build()).await;
    assert_eq!(list.status, 200);
    let tag = list.header("etag").expect("an ETag").to_string();
    assert_eq!(list.header("last-modified"), None, "a page is no one record");
    let again =
        h.send(rest(Method::GET, "/v1/payables?limit=2", &api, None).header("if-none-match", &tag).build()).await;
    assert_eq!(again.status, 304);
    let next =
        h.send(rest(Method::GET, "/v1/payables?limit=3", &api, None).header("if-none-match", &tag).build()).await;
    assert_eq!(next.status, 200, "another page is another answer");

    let missing = h.send(rest(Method::GET, &format!("/v1/companies/{MISSING}"), &api, None).build()).await;
    assert_eq!((missing.status.as_u16(), missing.header("etag")), (404, None));
    let created = h
        .send(
            rest(Method::POST, "/v1/companies", &api, Some(json!({"name": "Nova", "cnpj": "11444777000242"}))).build(),
        )
        .await;
    assert_eq!((created.status.as_u16(), created.header("etag")), (201, None));
}
