//! Attachment bytes in S3 (`KFIN_BLOB_URL=s3://bucket/prefix`), for real, against
//! `moto_server` on 127.0.0.1 (the SDK finds it through `AWS_ENDPOINT_URL_S3`), on SQLite
//! and PostgreSQL:
//!
//! * an upload puts the object and its row keeps no bytes, only the object's location;
//! * a download returns the same bytes, from the store the row names (also through a
//!   process whose own configuration keeps bytes in the database);
//! * a delete removes the row, then the object;
//! * a store that does not answer is 503 `service_unavailable` + `Retry-After`, and an
//!   upload then writes no row; a removal that fails stays queued.
//!
//! The environment is process-wide, so everything runs in one test (one process).

use crate::common;

use std::time::{Duration, Instant};

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use common::*;
use http::Method;
use kobana_finance_mcp::app::App;
use serde_json::Value;

const BUCKET: &str = "kfin-attachments";
const PREFIX: &str = "tenant-files";
const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n";
const BOUNDARY: &str = "kfin-blob-boundary";

fn upload(token: &str, file_name: &str, content_type: &str, data: &[u8]) -> Mcp {
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: {content_type}\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(data);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    Mcp::raw(body)
        .path("/v1/attachments")
        .bearer(token)
        .header("content-type", &format!("multipart/form-data; boundary={BOUNDARY}"))
}

fn call(method: Method, path: &str, token: &str) -> Mcp {
    Mcp::raw("").method(method).path(path).bearer(token)
}

async fn scalar(h: &Harness, sql: &str) -> i64 {
    sql::query(sql.to_string()).fetch_one(&h.state.db).await.unwrap().try_get(0).unwrap()
}

fn assert_unavailable(reply: &Reply) {
    assert_eq!(reply.status, 503, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(reply.json()["error"]["code"], "service_unavailable");
    assert!(reply.header("retry-after").is_some_and(|v| v.parse::<u64>().is_ok()));
}

async fn s3_harness() -> Harness {
    Harness::with(|c| c.blob_url = Some(format!("s3://{BUCKET}/{PREFIX}"))).await
}

/// An S3 client of the test's own, to look into the bucket.
fn admin(endpoint: &str) -> aws_sdk_s3::Client {
    aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .endpoint_url(endpoint)
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
            .force_path_style(true)
            .build(),
    )
}

async fn keys_in_bucket(s3: &aws_sdk_s3::Client) -> Vec<String> {
    let listed = s3.list_objects_v2().bucket(BUCKET).send().await.expect("list the bucket");
    listed.contents().iter().filter_map(|o| o.key().map(str::to_string)).collect()
}

#[tokio::test]
async fn attachment_bytes_in_s3() {
    let _env = common::environment().await;
    common::moto::aws_test_environment();
    std::env::remove_var("AWS_ENDPOINT_URL");

    // A store nobody listens on: the upload is refused and nothing is written.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::env::set_var("AWS_ENDPOINT_URL_S3", format!("http://127.0.0.1:{closed}"));
    let h = s3_harness().await;
    let token = h.api_token(DEMO_OWNER);
    let rows_before = scalar(&h, "SELECT COUNT(*) FROM attachments").await;
    assert_unavailable(&h.send(upload(&token, "nota.pdf", "application/pdf", PDF).build()).await);
    assert_eq!(scalar(&h, "SELECT COUNT(*) FROM attachments").await, rows_before, "no row without its object");
    assert_eq!(scalar(&h, "SELECT COUNT(*) FROM audit_events WHERE action = 'attachments.upload'").await, 0);
    drop(h);

    let Some(moto) = common::moto::start("the S3 blob store test") else { return };
    std::env::set_var("AWS_ENDPOINT_URL_S3", &moto.endpoint);
    let s3 = admin(&moto.endpoint);
    s3.create_bucket().bucket(BUCKET).send().await.expect("create the bucket in moto");
    let h = s3_harness().await;
    let token = h.api_token(DEMO_OWNER);

    // Upload: the object is in the bucket under the prefix; the row names it, without bytes.
    let reply = h.send(upload(&token, "nota.pdf", "application/pdf", PDF).build()).await;
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.bytes));
    let attachment: Value = reply.json();
    let id = attachment["id"].as_str().unwrap().to_string();
    assert_eq!(attachment["file_size"], PDF.len());
    let key = format!("{PREFIX}/{DEMO_WORKSPACE_ACME}/{id}");
    assert_eq!(keys_in_bucket(&s3).await, vec![key.clone()]);
    let object = s3.get_object().bucket(BUCKET).key(&key).send().await.unwrap();
    assert_eq!(object.content_type(), Some("application/pdf"));
    assert_eq!(&object.body.collect().await.unwrap().into_bytes()[..], PDF);
    let row = sql::query("SELECT content, blob_key FROM attachments WHERE id = $1")
        .bind(&id)
        .fetch_one(&h.state.db)
        .await
        .unwrap();
    assert_eq!(row.try_get::<Option<Vec<u8>>, _>("content").unwrap(), None, "the row keeps no bytes");
    assert_eq!(row.try_get::<Option<String>, _>("blob_key").unwrap(), Some(format!("s3://{BUCKET}/{key}")));

    // Download: the same bytes, with the usual headers.
    let download = format!("/v1/attachments/{id}/download");
    let reply = h.send(call(Method::GET, &download, &token).build()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(&reply.bytes[..], PDF);
    assert_eq!(reply.header("content-type"), Some("application/pdf"));
    assert_eq!(reply.header("content-length"), Some(PDF.len().to_string().as_str()));

    // A process that keeps new bytes in the database still reads this one from S3.
    let plain = App::build(common::config(h.db.url.clone())).await.unwrap();
    let plain_app = kobana_finance_mcp::transport::router(plain.clone());
    let reply =
        Reply::from(tower::ServiceExt::oneshot(plain_app, call(Method::GET, &download, &token).build()).await.unwrap())
            .await;
    assert_eq!(reply.status, 200);
    assert_eq!(&reply.bytes[..], PDF);
    plain.db.close().await;

    // Delete: the row goes, then the object.
    let reply = h.send(call(Method::DELETE, &format!("/v1/attachments/{id}"), &token).build()).await;
    assert_eq!(reply.status, 204, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(scalar(&h, &format!("SELECT COUNT(*) FROM attachments WHERE id = '{id}'")).await, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !keys_in_bucket(&s3).await.is_empty() {
        assert!(Instant::now() < deadline, "the object of a deleted attachment is removed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    while scalar(&h, "SELECT COUNT(*) FROM blob_deletions").await != 0 {
        assert!(Instant::now() < deadline, "the removal leaves the queue");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The store goes away: uploads and downloads are 503 + Retry-After, no row is
    // written, and a delete's removal stays queued for the next housekeeping run.
    let reply = h.send(upload(&token, "extrato.csv", "text/csv", b"data,valor\n2026-11-30,10.00\n").build()).await;
    assert_eq!(reply.status, 201);
    let kept = reply.json()["id"].as_str().unwrap().to_string();
    moto.stop();
    let rows_before = scalar(&h, "SELECT COUNT(*) FROM attachments").await;
    assert_unavailable(&h.send(upload(&token, "nota.pdf", "application/pdf", PDF).build()).await);
    assert_eq!(scalar(&h, "SELECT COUNT(*) FROM attachments").await, rows_before, "no row without its object");
    assert_unavailable(&h.send(call(Method::GET, &format!("/v1/attachments/{kept}/download"), &token).build()).await);
    let reply = h.send(call(Method::DELETE, &format!("/v1/attachments/{kept}"), &token).build()).await;
    assert_eq!(reply.status, 204, "the delete itself needs only the database");
    let report = h.state.housekeep().await;
    assert_eq!(report.blobs_removed, 0);
    assert_eq!(scalar(&h, "SELECT COUNT(*) FROM blob_deletions").await, 1, "the removal waits for the store");
}
