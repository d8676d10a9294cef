//! Scenarios every plain `/v1` resource shares — companies, categories, classification
//! centers, people, taxes, financial accounts and transactions — each one test that
//! sweeps the table of `table.rs`. What the table cannot say is read from the server:
//! each resource's declaration (`kobana_finance_mcp::ops::…::OPERATIONS`: its reads,
//! writes and own routes) and the served `GET /v1/openapi.json`, whose collections with
//! a JSON create and a delete must each have a row (or be swept by `billing_tests!`).

pub mod table;

use http::Method;
use serde_json::{json, Value};

use kobana_finance_mcp::domain::roles::Access;
use kobana_finance_mcp::ops::machinery::resource::{Op, Shape};

use crate::common::*;
use table::{rows, Row, SWEPT_ELSEWHERE};

/// The served OpenAPI document.
pub async fn openapi(h: &Harness) -> Value {
    let reply = h.send(Mcp::raw("").method(Method::GET).path("/v1/openapi.json").build()).await;
    assert_eq!(reply.status, 200);
    reply.json()
}

/// The JSON schema of the request body of `method path` in the OpenAPI `doc`.
pub fn request_schema<'a>(doc: &'a Value, path: &str, method: &str) -> &'a Value {
    &doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
}

/// The JSON schema of the answer `status` to `method path` in the OpenAPI `doc`.
pub fn response_schema<'a>(doc: &'a Value, path: &str, method: &str, status: u16) -> &'a Value {
    &doc["paths"][path][method]["responses"][status.to_string()]["content"]["application/json"]["schema"]
}

/// The integer `sql` returns with `binds`.
async fn scalar(h: &Harness, sql: &str, binds: &[&str]) -> i64 {
    let mut query = sql::query(sql.to_string());
    for b in binds {
        query = query.bind(b.to_string());
    }
    query.fetch_one(&h.state.db).await.unwrap().try_get(0).unwrap()
}

/// Asserts that `actual` has every field of `expected` (nested objects: recursively).
fn assert_has(actual: &Value, expected: &Value, at: &str) {
    match expected.as_object() {
        Some(fields) if actual.is_object() => {
            for (name, value) in fields {
                assert_has(&actual[name], value, &format!("{at}.{name}"));
            }
        }
        _ => assert_eq!(actual, expected, "{at}"),
    }
}

/// A fresh harness for `row`: the demo's workspaces, users and companies, and the demo
/// accounts where the row's bodies name them.
async fn harness(row: &Row) -> Harness {
    let h = Harness::new().await;
    if row.accounts {
        for (id, workspace, company) in [
            (ACME_CHECKING_ACCOUNT, DEMO_WORKSPACE_ACME, ACME_COMPANY),
            (BETA_ACCOUNT, DEMO_WORKSPACE_BETA, BETA_COMPANY),
        ] {
            exec(
                &h,
                "INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, created_at, updated_at, created_via, updated_via)
                 VALUES ($1, $2, $3, 'Conta', 'checking', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'system', 'system')",
                &[id, workspace, company],
            )
            .await;
        }
    }
    h
}

impl Row {
    fn path(&self) -> &'static str {
        self.declaration.collection
    }

    fn item(&self, id: &str) -> String {
        format!("{}/{id}", self.path())
    }

    fn write_scope(&self) -> String {
        format!("{}.write", self.scope)
    }

    /// The paths of the declared reads (list, get and the resource's own), with `{id}`
    /// standing for `id`.
    fn reads(&self, id: &str) -> Vec<String> {
        let ops = self.declaration.operations.iter().filter(|op| op.access == Access::Read);
        ops.map(|op| self.declaration.path(op).replace("{id}", id)).collect()
    }

    async fn records_in(&self, h: &Harness, workspace: &str) -> i64 {
        scalar(h, &format!("SELECT COUNT(*) FROM {} WHERE workspace_id = $1", self.table), &[workspace]).await
    }
}

/// `POST` answers 201 with `Location`, the record as created (trimmed, normalised),
/// its provenance, and one audit event; `GET` answers the same record.
#[tokio::test]
async fn create_returns_201_with_location_provenance_and_audit() {
    for row in rows() {
        let h = harness(&row).await;
        let token = h.api_token(DEMO_OWNER);
        let reply = send(&h, Method::POST, row.path(), &token, Some(row.acme.clone())).await;
        assert_eq!(reply.status, 201, "{}: {}", row.path(), text(&reply));
        let record = reply.json();
        let rid = id(&record);
        assert_eq!(reply.header("location"), Some(row.item(&rid).as_str()), "{}", row.path());
        assert_has(&record, &row.created, row.path());
        let provenance =
            json!({"created_via": "api", "updated_via": "api", "created_by": DEMO_OWNER, "updated_by": DEMO_OWNER});
        assert_has(&record, &provenance, row.path());
        assert!(record["created_at"].is_string() && record["updated_at"].is_string(), "{record}");
        for field in row.absent {
            assert!(record.get(field).is_none(), "{}: {field} is not part of the record", row.path());
        }
        let audit = format!("{}.create", row.audit);
        let sql = "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = $2 AND channel = 'api' AND user_id = $3";
        assert_eq!(scalar(&h, sql, &[&rid, &audit, DEMO_OWNER]).await, 1, "{audit}");
        let got = send(&h, Method::GET, &row.item(&rid), &token, None).await;
        assert_eq!(got.status, 200, "{}", row.path());
        assert_eq!(as_answered(got.json()), record, "{}", row.path());
    }
}

/// A create repeated with the same key (either spelling of the header) answers the
/// first answer again, `X-Idempotency-Replayed: true`, and writes one record; another
/// body with the key is refused. In both workspaces.
#[tokio::test]
async fn idempotency_key_replays_and_refuses_a_different_body() {
    for row in rows() {
        let h = harness(&row).await;
        for (user, workspace, body, first, replay) in [
            (DEMO_OWNER, DEMO_WORKSPACE_ACME, &row.acme, "x-idempotency-key", "idempotency-key"),
            (DEMO_BETA_OWNER, DEMO_WORKSPACE_BETA, &row.beta, "idempotency-key", "x-idempotency-key"),
        ] {
            let token = h.api_token(user);
            let before = row.records_in(&h, workspace).await;
            let post = |body: &Value, header: &str| {
                rest(Method::POST, row.path(), &token, Some(body.clone())).header(header, "key-123").build()
            };
            let at = format!("{} in {workspace}", row.path());
            let original = h.send(post(body, first)).await;
            assert_eq!(original.status, 201, "{at}: {}", text(&original));
            assert!(original.header("x-idempotency-replayed").is_none(), "{at}");
            for header in [replay, first] {
                let again = h.send(post(body, header)).await;
                assert_eq!(again.status, 201, "{at}");
                assert_eq!(again.header("x-idempotency-replayed"), Some("true"), "{at}");
                assert_eq!(again.json(), original.json(), "{at}");
                assert_eq!(again.header("location"), original.header("location"), "{at}");
            }
            assert_eq!(row.records_in(&h, workspace).await, before + 1, "{at}: one record");
            let sql = format!("SELECT COUNT(*) FROM {} WHERE id = $1", row.table);
            assert_eq!(scalar(&h, &sql, &[&id(&original.json())]).await, 1, "{at}");
            let mut other = body.clone();
            other[row.label] = json!("Outra");
            for header in [first, replay] {
                let reused = h.send(post(&other, header)).await;
                assert_eq!(reused.status, 409, "{at}: {}", text(&reused));
                assert_eq!(reused.json()["error"]["code"], "conflict", "{at}");
                assert_eq!(reused.json()["error"]["details"]["reason"], "idempotency_key_reused", "{at}");
            }
            assert_eq!(row.records_in(&h, workspace).await, before + 1, "{at}: nothing more");
        }
    }
}

/// `PATCH` takes an idempotency key as a create does: a retry answers the first answer
/// (marked replayed) and changes nothing, even after another change; the key with
/// another body is 409 `conflict`.
#[tokio::test]
async fn a_patch_with_a_key_runs_once() {
    for row in rows() {
        let h = harness(&row).await;
        let token = h.api_token(DEMO_OWNER);
        let record = create_at(&h, row.path(), &token, row.acme.clone()).await;
        let item = row.item(&id(&record));
        let patch = |body: &Value| {
            rest(Method::PATCH, &item, &token, Some(body.clone())).header("x-idempotency-key", "patch-1")
        };
        let first = h.send(patch(&row.patch).build()).await;
        assert_eq!(first.status, 200, "{item}: {}", text(&first));
        assert!(first.header("x-idempotency-replayed").is_none(), "{item}");
        let mut other = row.patch.clone();
        other[row.label] = json!("Outra");
        assert_eq!(send(&h, Method::PATCH, &item, &token, Some(other.clone())).await.status, 200, "{item}");
        let again = h.send(patch(&row.patch).build()).await;
        assert_eq!(again.status, 200, "{item}: {}", text(&again));
        assert_eq!(again.header("x-idempotency-replayed"), Some("true"), "{item}");
        assert_eq!(again.json(), first.json(), "{item}: the first answer");
        let now = send(&h, Method::GET, &item, &token, None).await.json();
        assert_eq!(now[row.label], "Outra", "{item}: the retry changed nothing");
        let reused = h.send(patch(&other).build()).await;
        assert_eq!(reused.status, 409, "{item}: {}", text(&reused));
        assert_eq!(reused.json()["error"]["details"]["reason"], "idempotency_key_reused", "{item}");
    }
}

/// A client of the real API reads a record, changes one field and sends the whole of it
/// back: the answer's own fields are dropped, the change is written and nothing else
/// moves.
#[tokio::test]
async fn a_record_read_changed_and_sent_back_is_updated() {
    for row in rows() {
        let h = harness(&row).await;
        let token = h.api_token(DEMO_OWNER);
        let record = create_at(&h, row.path(), &token, row.acme.clone()).await;
        let item = row.item(&id(&record));
        let mut read = send(&h, Method::GET, &item, &token, None).await.json();
        read[row.label] = json!("Lido e devolvido");
        let reply = send(&h, Method::PATCH, &item, &token, Some(read.clone())).await;
        assert_eq!(reply.status, 200, "{item}: {}", text(&reply));
        let answer = reply.json();
        for (field, value) in read.as_object().unwrap() {
            if !field.starts_with("updated_") && field != "attachments" {
                assert_eq!(&answer[field], value, "{item}: {field}");
            }
        }
    }
}

/// Another workspace's record answers exactly as a missing one (read, change, delete,
/// list, filter, the workspace named explicitly) and is left as it was.
#[tokio::test]
async fn another_workspace_is_indistinguishable_from_missing() {
    for row in rows() {
        let h = harness(&row).await;
        let owner = h.api_token(DEMO_OWNER);
        let beta = h.api_token(DEMO_BETA_OWNER);
        let list = format!("{}?limit=100", row.path());
        let before = send(&h, Method::GET, &list, &owner, None).await;
        assert_eq!(before.status, 200, "{}", text(&before));
        let theirs = create_at(&h, row.path(), &beta, row.beta.clone()).await;
        let theirs_id = id(&theirs);
        let mut others = vec![theirs_id.as_str(), MISSING, "not-a-uuid"];
        others.extend(row.beta_seeded);
        for other in others {
            for (method, body) in
                [(Method::GET, None), (Method::PATCH, Some(row.patch.clone())), (Method::DELETE, None)]
            {
                let reply = send(&h, method.clone(), &row.item(other), &owner, body).await;
                assert_eq!(reply.status, 404, "{method} {}: {}", row.item(other), text(&reply));
                assert_eq!(reply.json()["error"]["code"], "not_found", "{method} {}", row.item(other));
            }
        }
        let after = send(&h, Method::GET, &list, &owner, None).await.json();
        assert_eq!(after, before.json(), "{}: the list does not change", row.path());
        for other in [theirs_id.as_str()].iter().chain(row.beta_seeded) {
            assert!(!after.to_string().contains(other), "{}: {other} is not listed", row.path());
        }
        if row.company {
            // Another workspace's company filters as a missing one: an invalid reference.
            let filtered = |company: &str| format!("{}?company_id={company}", row.path());
            let theirs = send(&h, Method::GET, &filtered(BETA_COMPANY), &owner, None).await;
            let missing = send(&h, Method::GET, &filtered(MISSING), &owner, None).await;
            assert_eq!((theirs.status.as_u16(), theirs.json()), (missing.status.as_u16(), missing.json()));
            assert_eq!((theirs.status.as_u16(), details(&theirs)), (422, pair("company_id", "invalid_reference")));
        }
        let explicit = format!("{}?workspace_id={DEMO_WORKSPACE_BETA}", row.path());
        let reply = send(&h, Method::GET, &explicit, &owner, None).await;
        assert_eq!(reply.status, 404, "{explicit}");
        assert_eq!(reply.json()["error"]["code"], "not_found", "{explicit}");
        let still = send(&h, Method::GET, &row.item(&theirs_id), &beta, None).await;
        assert_eq!((still.status.as_u16(), as_answered(still.json())), (200, theirs.clone()), "{}", row.path());
        let sql = format!("SELECT COUNT(*) FROM {} WHERE id = $1 AND {} = $2", row.table, row.label);
        assert_eq!(scalar(&h, &sql, &[&theirs_id, theirs[row.label].as_str().unwrap()]).await, 1);
    }
}

/// The token's scope and the role in the workspace are checked by the operation: the
/// read scope does not write, the write scope does not read, the viewer only reads,
/// finance writes (and deletes where its role may) in the workspace it names.
#[tokio::test]
async fn scope_and_role_are_checked_inside_the_operation() {
    for row in rows() {
        let h = harness(&row).await;
        let path = row.path();
        let write = row.write_scope();
        let read_only = v1_token(&h, DEMO_OWNER, row.scope);
        let other_scope = format!("{} {write}", row.other_scope);
        let write_only = v1_token(&h, DEMO_OWNER, &other_scope);
        let viewer = h.api_token(DEMO_VIEWER);
        let finance = h.api_token(DEMO_FINANCE);
        let refused = |reply: &Reply, status: u16, code: &str, at: &str| {
            assert_eq!(reply.status, status, "{at}: {}", text(reply));
            assert_eq!(reply.json()["error"]["code"], code, "{at}");
        };
        let lacks = |reply: &Reply, required: &str, granted: &str, at: &str| {
            refused(reply, 403, "insufficient_scope", at);
            let granted: Vec<&str> = granted.split(' ').collect();
            assert_eq!(reply.json()["error"]["details"], json!({"required": required, "granted": granted}), "{at}");
        };
        let reply = send(&h, Method::POST, path, &read_only, Some(row.acme.clone())).await;
        lacks(&reply, &write, row.scope, &format!("{path}: create with the read scope"));
        // The permission is checked before the body: a body the schema refuses changes
        // nothing in the answer of a caller who may not write.
        let bad = json!({"no_such_field": 1});
        let reply = send(&h, Method::POST, path, &read_only, Some(bad.clone())).await;
        lacks(&reply, &write, row.scope, &format!("{path}: a bad body with the read scope"));
        let reply = send(&h, Method::POST, path, &viewer, Some(bad.clone())).await;
        refused(&reply, 403, "forbidden", &format!("{path}: the viewer posts a bad body"));
        assert_eq!(send(&h, Method::GET, path, &read_only, None).await.status, 200, "{path}");
        let reply = send(&h, Method::POST, path, &viewer, Some(row.acme.clone())).await;
        refused(&reply, 403, "forbidden", &format!("{path}: the viewer creates"));
        // The finance user has two workspaces: it names one.
        refused(&send(&h, Method::GET, path, &finance, None).await, 400, "workspace_required", path);
        let q = format!("?workspace_id={DEMO_WORKSPACE_ACME}");
        let reply = send(&h, Method::POST, &format!("{path}{q}"), &finance, Some(row.acme.clone())).await;
        assert_eq!(reply.status, 201, "{path}: {}", text(&reply));
        let record = reply.json();
        assert_eq!(record["created_by"], DEMO_FINANCE, "{path}");
        let rid = id(&record);
        let item = row.item(&rid);
        for read in row.reads(&rid) {
            lacks(&send(&h, Method::GET, &read, &write_only, None).await, row.scope, &other_scope, &read);
        }
        for (method, body) in [(Method::PATCH, Some(row.patch.clone())), (Method::DELETE, None)] {
            let at = format!("{method} {item}");
            lacks(&send(&h, method.clone(), &item, &read_only, body.clone()).await, &write, row.scope, &at);
            refused(&send(&h, method.clone(), &item, &viewer, body).await, 403, "forbidden", &at);
        }
        let at = format!("PATCH {item} with a bad body");
        lacks(&send(&h, Method::PATCH, &item, &read_only, Some(bad.clone())).await, &write, row.scope, &at);
        refused(&send(&h, Method::PATCH, &item, &viewer, Some(bad)).await, 403, "forbidden", &at);
        let got = send(&h, Method::GET, &item, &viewer, None).await;
        assert_eq!((got.status.as_u16(), as_answered(got.json())), (200, record.clone()), "{item}: unchanged");
        assert_eq!(send(&h, Method::GET, path, &viewer, None).await.status, 200, "{path}");
        let scoped = format!("{item}{q}");
        let reply = send(&h, Method::PATCH, &scoped, &finance, Some(row.patch.clone())).await;
        assert_eq!(reply.status, 200, "{scoped}: {}", text(&reply));
        assert_has(&reply.json(), &row.patch, &scoped);
        assert_eq!(reply.json()["updated_by"], DEMO_FINANCE, "{scoped}");
        let reply = send(&h, Method::DELETE, &scoped, &finance, None).await;
        if row.finance_deletes {
            assert_eq!(reply.status, 204, "{scoped}: {}", text(&reply));
        } else {
            refused(&reply, 403, "forbidden", &format!("finance deletes {scoped}"));
            assert_eq!(send(&h, Method::DELETE, &scoped, &h.api_token(DEMO_OWNER), None).await.status, 204);
        }
    }
}

/// Deleting answers 204, then the record is gone for every operation (404), from
/// lists, and from the table (or marked deleted); one audit event names the user.
#[tokio::test]
async fn delete_is_204_then_404_with_audit() {
    for row in rows() {
        let h = harness(&row).await;
        let token = h.api_token(DEMO_OWNER);
        let rid = id(&create_at(&h, row.path(), &token, row.acme.clone()).await);
        let item = row.item(&rid);
        assert_eq!(send(&h, Method::DELETE, &item, &token, None).await.status, 204, "{item}");
        for (method, body) in [(Method::DELETE, None), (Method::GET, None), (Method::PATCH, Some(row.patch.clone()))] {
            let reply = send(&h, method.clone(), &item, &token, body).await;
            assert_eq!(reply.status, 404, "{method} {item}");
            assert_eq!(reply.json()["error"]["code"], "not_found", "{method} {item}");
        }
        let list = send(&h, Method::GET, &format!("{}?limit=100", row.path()), &token, None).await.json();
        assert!(!list.to_string().contains(&rid), "{item}: gone from lists");
        let kept = if row.soft_delete { " AND deleted_at IS NOT NULL" } else { "" };
        let sql = format!("SELECT COUNT(*) FROM {} WHERE id = $1{kept}", row.table);
        assert_eq!(scalar(&h, &sql, &[&rid]).await, i64::from(row.soft_delete), "{item}");
        let audit = format!("{}.delete", row.audit);
        let sql = "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = $2 AND user_id = $3";
        assert_eq!(scalar(&h, sql, &[&rid, &audit, DEMO_OWNER]).await, 1, "{audit}");
    }
}

/// The refusals a create's request schema implies, for the valid `body`: each required
/// field left out, a field of the wrong type, outside its enum, its length or its
/// format, a field the schema does not have.
fn implied_violations(schema: &Value, body: &Value) -> Vec<(Value, String, &'static str)> {
    let mut cases = Vec::new();
    let with = |field: &str, value: Value| {
        let mut b = body.clone();
        b[field] = value;
        b
    };
    for field in schema["required"].as_array().unwrap().iter().filter_map(Value::as_str) {
        let mut b = body.clone();
        b.as_object_mut().unwrap().remove(field);
        cases.push((b, field.to_string(), "required"));
    }
    cases.push((with("colour", json!("red")), "colour".into(), "unknown_field"));
    for (field, property) in schema["properties"].as_object().unwrap() {
        let types: Vec<&str> = match &property["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let mut case = |value: Value, reason| cases.push((with(field, value), field.clone(), reason));
        if types.contains(&"string") {
            case(json!(5), "wrong_type");
            if property["enum"].is_array() {
                case(json!("not-one-of-them"), "invalid_value");
            }
            if property["pattern"].is_null() {
                if property["minLength"].as_u64().is_some_and(|n| n > 0) {
                    case(json!(""), "too_short");
                }
                if let Some(max) = property["maxLength"].as_u64() {
                    case(json!("x".repeat(max as usize + 1)), "too_long");
                }
            }
            match property["format"].as_str() {
                Some("uuid") => case(json!("nope"), "invalid_uuid"),
                Some("date") => case(json!("2026-02-30"), "invalid_date"),
                _ => {}
            }
        } else if types == ["boolean"] || types == ["boolean", "null"] {
            case(json!("yes"), "wrong_type");
        }
    }
    cases
}

/// What a create's request type refuses is a 400 `bad_request` naming the field and
/// the reason — the cases its schema implies and the resource's own — and writes
/// nothing; a body that is not JSON is a 400 too.
#[tokio::test]
async fn schema_violations_are_unprocessable_naming_the_field() {
    for row in rows() {
        let h = harness(&row).await;
        let token = h.api_token(DEMO_OWNER);
        let before = [row.records_in(&h, DEMO_WORKSPACE_ACME).await, row.records_in(&h, DEMO_WORKSPACE_BETA).await];
        let schema = kobana_finance_mcp::mcp::schema::resolve(&(row.create_schema)());
        let mut cases = implied_violations(&schema, &row.acme);
        cases.extend(row.violations.iter().map(|(b, f, r)| (b.clone(), f.to_string(), *r)));
        for (body, field, reason) in cases {
            let reply = send(&h, Method::POST, row.path(), &token, Some(body.clone())).await;
            assert_eq!(reply.status, 422, "{} {body}: {}", row.path(), text(&reply));
            assert_eq!(reply.json()["error"]["code"], "unprocessable_entity", "{body}");
            assert_eq!(details(&reply), pair(&field, reason), "{} {body}", row.path());
        }
        let not_json =
            rest(Method::POST, row.path(), &token, None).body("{oops").header("content-type", "application/json");
        let reply = h.send(not_json.build()).await;
        assert_eq!(reply.status, 400, "{}", row.path());
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{}", row.path());
        let after = [row.records_in(&h, DEMO_WORKSPACE_ACME).await, row.records_in(&h, DEMO_WORKSPACE_BETA).await];
        assert_eq!(after, before, "{}: nothing written", row.path());
    }
}

/// The served OpenAPI document lists every declared operation of every resource with
/// its id, scope, request schema (the create's is its request type's, closed) and
/// success answer; every collection with the record shapes has a row here.
#[tokio::test]
async fn openapi_lists_every_operation_of_every_resource() {
    let h = Harness::new().await;
    let doc = openapi(&h).await;
    assert_eq!(doc["openapi"], "3.1.0");
    let rows = rows();
    let paths = doc["paths"].as_object().unwrap();
    for (path, item) in paths {
        // A JSON create and a delete by id (an upload, `multipart/form-data`, is not plain).
        let json_create = item["post"]["requestBody"]["content"]["application/json"].is_object();
        let records = json_create && doc["paths"][format!("{path}/{{id}}")]["delete"].is_object();
        if records && !SWEPT_ELSEWHERE.contains(&path.as_str()) {
            assert!(
                rows.iter().any(|row| row.path() == path),
                "{path} has the record shapes but no row in records/table.rs"
            );
        }
    }
    for row in &rows {
        let d = row.declaration;
        let shapes = [
            ("list", Shape::List),
            ("create", Shape::Create),
            ("get", Shape::Get),
            ("update", Shape::Update),
            ("delete", Shape::Delete),
        ];
        for (name, shape) in shapes {
            let op = d.shaped(shape).unwrap_or_else(|| panic!("{}: no {name}", row.path()));
            assert_eq!(d.id(op), format!("{}_{name}", row.ids), "{}", row.path());
        }
        for op in d.operations {
            let at = format!("{} {}", op.method, d.path(op));
            let documented = &doc["paths"][d.path(op)][op.method];
            assert!(documented.is_object(), "{at}");
            assert_eq!(documented["operationId"], d.id(op), "{at}");
            let scope = if op.access == Access::Read { row.scope.to_string() } else { row.write_scope() };
            assert_eq!(documented["security"], json!([{"bearer": [scope]}]), "{at}");
            assert!(documented["responses"][op.success.to_string()].is_object(), "{at}");
            let keyed =
                documented["parameters"].as_array().is_some_and(|p| p.iter().any(|p| p["name"] == "X-Idempotency-Key"));
            assert_eq!(keyed, matches!(op.method, "post" | "patch"), "{at}: takes X-Idempotency-Key");
            if let Some(request) = op.request {
                assert_eq!(request_schema(&doc, &d.path(op), op.method), &request(), "{at}");
            }
        }
        let create: &Op = d.shaped(Shape::Create).unwrap();
        let schema = request_schema(&doc, row.path(), "post");
        assert_eq!(schema, &(row.create_schema)(), "{}", row.path());
        assert!(create.request.is_some());
        assert_eq!(schema["additionalProperties"], json!(false), "{}", row.path());
        assert_eq!(schema["required"], json!(row.required), "{}", row.path());
    }
}

/// A get's answer as the other answers show the record: a get alone answers the record's
/// files (`attachments`, on the bills and the transactions), the others their count.
fn as_answered(mut read: Value) -> Value {
    if let Some(record) = read.as_object_mut() {
        record.remove("attachments");
    }
    read
}
