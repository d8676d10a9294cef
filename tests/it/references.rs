//! One answer per situation: a reference to a company, an account, a person, a category
//! or a center that the workspace does not have — unknown, deleted or another
//! workspace's — answers alike wherever it is named (a body, a query, a list filter, on
//! both doors); a malformed id answers one reason.

use http::Method;
use serde_json::{json, Value};

use crate::common::*;

/// A company of ACME's, created and then deleted: its id names a deleted company.
async fn deleted_company(h: &Harness, token: &str) -> String {
    let company = create_at(h, "/v1/companies", token, json!({"name": "Encerrada", "cnpj": "11444777000242"})).await;
    let id = id(&company);
    let reply = send(h, Method::DELETE, &format!("/v1/companies/{id}"), token, None).await;
    assert_eq!(reply.status, 204, "{}", text(&reply));
    id
}

/// A person of ACME's company, created and then deleted.
async fn deleted_person(h: &Harness, token: &str) -> String {
    let person = create_at(h, "/v1/people", token, json!({"company_id": ACME_COMPANY, "name": "Ex-fornecedor"})).await;
    let id = id(&person);
    let reply = send(h, Method::DELETE, &format!("/v1/people/{id}"), token, None).await;
    assert_eq!(reply.status, 204, "{}", text(&reply));
    id
}

/// A new cash account of `company`: its id.
async fn cash_account(h: &Harness, token: &str, company: &str) -> String {
    let account = json!({"company_id": company, "name": "Caixa", "type": "cash"});
    id(&create_at(h, "/v1/financial-accounts", token, account).await)
}

/// `(status, code, field, reason)` of an answer.
fn answer(reply: &Reply) -> (u16, Value, Option<String>, Option<String>) {
    let (field, reason) = details(reply);
    (reply.status.as_u16(), reply.json()["error"]["code"].clone(), field, reason)
}

/// A live record of ACME's company (the demo's) for a body, query or filter field of
/// this name that names one: what a request names beside the reference under test.
pub fn live_id(name: &str) -> Option<&'static str> {
    Some(match name {
        "company_id" => ACME_COMPANY,
        "to_account_id" => ACME_CASH_ACCOUNT,
        n if n.ends_with("account_id") => ACME_CHECKING_ACCOUNT,
        n if n.ends_with("person_id") => ACME_LANDLORD,
        n if n.ends_with("category_id") || n == "parent_id" => ACME_RENT_CATEGORY,
        n if n.ends_with("classification_center_id") => ACME_ADMIN_COST_CENTER,
        _ => return None,
    })
}

/// A list filter naming a record the workspace does not have is what a query's or a
/// body's reference is: 422 `invalid_reference` naming the filter (every value of an
/// `[in]`), and a record of another company than the one filtered is a mismatch, on
/// both doors; a malformed id is 400 `invalid_uuid`, as in a query and a body.
#[tokio::test]
async fn a_list_filter_names_its_reference_as_a_body_does() {
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    let (company, person) = (deleted_company(&h, &token).await, deleted_person(&h, &token).await);
    let services_account = cash_account(&h, &token, ACME_SERVICES).await;
    let unknown =
        |field: &str| (422, json!("unprocessable_entity"), Some(field.into()), Some("invalid_reference".into()));
    for (path, field) in [
        (format!("/v1/payables?company_id={MISSING}"), "company_id"),
        (format!("/v1/payables?company_id={company}"), "company_id"),
        (format!("/v1/receivables?company_id={BETA_COMPANY}"), "company_id"),
        (format!("/v1/people?company_id[in]={ACME_COMPANY},{BETA_COMPANY}"), "company_id"),
        (format!("/v1/financial-accounts?company_id={company}"), "company_id"),
        (format!("/v1/financial-transactions?financial_account_id={MISSING}"), "financial_account_id"),
        (format!("/v1/financial-transactions?financial_account_id={BETA_ACCOUNT}"), "financial_account_id"),
        (format!("/v1/payables?person_id={person}"), "person_id"),
        (format!("/v1/payables?person_id={BETA_PERSON}"), "person_id"),
        (format!("/v1/financial-transactions?category_id={BETA_CATEGORY}"), "category_id"),
        (format!("/v1/receivables?classification_center_id={BETA_COST_CENTER}"), "classification_center_id"),
        (format!("/v1/categories?parent_id={MISSING}"), "parent_id"),
    ] {
        let reply = send(&h, Method::GET, &path, &token, None).await;
        assert_eq!(answer(&reply), unknown(field), "{path}: {}", text(&reply));
    }
    // A record of another company than the one filtered.
    let path = format!("/v1/financial-transactions?company_id={ACME_COMPANY}&financial_account_id={services_account}");
    let reply = send(&h, Method::GET, &path, &token, None).await;
    assert_eq!(
        answer(&reply),
        (
            422,
            json!("unprocessable_entity"),
            Some("financial_account_id".into()),
            Some("account_company_mismatch".into())
        )
    );
    // The workspace's own records list as before.
    let path = format!("/v1/payables?company_id={ACME_COMPANY}&person_id={ACME_LANDLORD}");
    let reply = send(&h, Method::GET, &path, &token, None).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    assert!(!reply.json()["data"].as_array().unwrap().is_empty());
    // A malformed id: one reason, whichever filter and however given.
    for path in ["/v1/payables?company_id=nope", &format!("/v1/people?company_id[in]={ACME_COMPANY},nope")] {
        let reply = send(&h, Method::GET, path, &token, None).await;
        assert_eq!(answer(&reply), (400, json!("bad_request"), Some("company_id".into()), Some("invalid_uuid".into())));
    }
    // The MCP door answers the same.
    for (filters, status_code, reason) in [
        (json!({"company_id": BETA_COMPANY}), "unprocessable_entity", "invalid_reference"),
        (json!({"person_id": {"in": [person]}}), "unprocessable_entity", "invalid_reference"),
        (json!({"company_id": "nope"}), "bad_request", "invalid_uuid"),
    ] {
        let call = call("finance_payables_list", json!({"filters": filters}));
        let error = tool_error(&h.send(call.bearer(&h.token(DEMO_OWNER)).build()).await.result());
        assert_eq!((&error["code"], &error["details"]["reason"]), (&json!(status_code), &json!(reason)), "{error}");
    }
}

/// The situations of a reference the workspace does not have: unknown, deleted, another
/// workspace's — `(what, id)`.
type Situations = Vec<(&'static str, String)>;

/// `schema` with its `$ref` (to the document's own `$defs`) followed.
fn resolved<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/")) {
        Some(pointer) => resolved(root.pointer(&format!("/{pointer}")).unwrap_or(&Value::Null), root),
        None => schema,
    }
}

/// A value `schema` accepts for a field called `name`: what a client sends when it
/// sends only what is required.
fn sample(schema: &Value, root: &Value, name: &str) -> Value {
    let schema = resolved(schema, root);
    if let Some(branches) = schema.get("anyOf").or(schema.get("oneOf")).and_then(Value::as_array) {
        let branch = branches.iter().find(|b| resolved(b, root)["type"] != "null").unwrap_or(&Value::Null);
        return sample(branch, root, name);
    }
    if let Some(value) = schema.get("const").or(schema["enum"].get(0)) {
        return value.clone();
    }
    let kind = match &schema["type"] {
        Value::Array(types) => types.iter().find(|t| *t != "null").cloned().unwrap_or_default(),
        kind => kind.clone(),
    };
    match (kind.as_str().unwrap_or(""), schema["format"].as_str()) {
        ("object", _) => {
            let mut object = serde_json::Map::new();
            for field in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                object.insert(field.into(), sample(&schema["properties"][field], root, field));
            }
            Value::Object(object)
        }
        ("array", _) => {
            let items = schema["minItems"].as_u64().unwrap_or(0);
            (0..items).map(|_| sample(&schema["items"], root, name)).collect()
        }
        ("integer", _) => schema["minimum"].as_i64().map_or(json!(1), |m| json!(m.max(1))),
        ("number", _) => json!(1),
        ("boolean", _) => json!(true),
        (_, Some("uuid")) => json!(live_id(name).unwrap_or(ACME_COMPANY)),
        _ if name.ends_with("_id") => json!(live_id(name).unwrap_or(ACME_COMPANY)),
        (_, Some("date")) if name == "to" || name.starts_with("end") => json!("2026-01-31"),
        (_, Some("date")) => json!("2026-01-01"),
        _ if schema["pattern"].as_str().is_some_and(|p| p.contains("\\.")) => json!("10.00"),
        _ if name == "cnpj" => json!("11444777000242"),
        _ => json!("x".repeat(schema["minLength"].as_u64().unwrap_or(1) as usize)),
    }
}

/// One operation of the served document.
struct Operation {
    method: Method,
    path: String,
    /// Query parameters: (name, schema, required).
    query: Vec<(String, Value, bool)>,
    /// The JSON body's schema, if it takes one.
    body: Option<Value>,
}

fn operations(doc: &Value) -> Vec<Operation> {
    let mut all = Vec::new();
    for (path, methods) in doc["paths"].as_object().unwrap() {
        for (method, operation) in methods.as_object().unwrap() {
            let query = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "query")
                .map(|p| (p["name"].as_str().unwrap().to_string(), p["schema"].clone(), p["required"] == true))
                .collect();
            let body = operation["requestBody"]["content"]["application/json"]["schema"].clone();
            all.push(Operation {
                method: method.to_uppercase().parse().unwrap(),
                path: path.clone(),
                query,
                body: body.is_object().then_some(body),
            });
        }
    }
    all
}

/// Whether a field of this name and schema names a company (`Some(true)`) or an account
/// (`Some(false)`).
fn names_company(name: &str, schema: &Value) -> Option<bool> {
    let id = is_id(name, schema);
    match name {
        "company_id" if id => Some(true),
        n if id && n.ends_with("account_id") => Some(false),
        _ => None,
    }
}

/// Whether a field of this name and schema takes an id: a UUID by its format, or a
/// text named `…_id`.
fn is_id(name: &str, schema: &Value) -> bool {
    let text = schema["type"] == "string" || schema["type"].as_array().is_some_and(|t| t.contains(&json!("string")));
    schema["format"] == "uuid" || schema["anyOf"].to_string().contains("\"uuid\"") || (text && name.ends_with("_id"))
}

/// What the sweep sends: an operation at `path` with `query` and `body`.
struct Sent<'a> {
    op: &'a Operation,
    path: String,
    query: Vec<(String, String)>,
    body: Option<Value>,
}

impl Sent<'_> {
    async fn answer(&self, h: &Harness, token: &str) -> (u16, Value, Option<String>, Option<String>) {
        let query: Vec<String> = self.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let path = match query.is_empty() {
            true => self.path.clone(),
            false => format!("{}?{}", self.path, query.join("&")),
        };
        answer(&send(h, self.op.method.clone(), &path, token, self.body.clone()).await)
    }
}

/// The id a path's `{id}` is given: the first record its collection lists (a pending
/// one where the list takes a status), else an id no record has.
async fn path_id(h: &Harness, token: &str, op: &Operation) -> String {
    let Some((collection, _)) = op.path.split_once("/{id}") else { return String::new() };
    for query in ["?status=pending", ""] {
        let list = send(h, Method::GET, &format!("{collection}{query}"), token, None).await;
        if let Some(id) = list.json()["data"][0]["id"].as_str() {
            return id.to_string();
        }
    }
    MISSING.to_string()
}

/// The request a client sends with only what `op` requires, each reference a live
/// record of ACME's company.
async fn plain<'a>(h: &Harness, token: &str, doc: &Value, op: &'a Operation) -> Sent<'a> {
    let query = op
        .query
        .iter()
        .filter(|(_, _, required)| *required)
        .map(|(name, schema, _)| {
            let value = sample(schema, doc, name);
            (name.clone(), value.as_str().map_or(value.to_string(), str::to_string))
        })
        .collect();
    let body = op.body.as_ref().map(|schema| {
        let mut body = sample(schema, schema, "");
        for name in ALSO_NAMED.iter().filter(|name| schema["properties"].get(**name).is_some()) {
            body[*name] = json!(live_id(name));
        }
        body
    });
    let path = op.path.replace("{id}", &path_id(h, token, op).await);
    Sent { op, path, query, body }
}

/// What a plain request names beside what it requires, where it takes them: a bill's
/// person (its payment method may need one), a rule's criterion and action.
const ALSO_NAMED: [&str; 3] = ["person_id", "account_id", "set_person_id"];

/// The fields the sweep does not send a reference in, each with why: `(operation,
/// field, why)`.
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "POST /v1/automatic-rules",
        "set_expected_account_id",
        "the plain rule is of the transactions' scope (its first), which takes no expected account \
         (422 billings_only, whatever the account)",
    ),
    (
        "PATCH /v1/automatic-rules/{id}",
        "set_expected_account_id",
        "the rule it changes (the demo's first) is of the transactions' scope, which takes no expected account \
     (422 billings_only, whatever the account)",
    ),
];

/// Every operation of `/v1/openapi.json` that takes a company or an account — in its
/// query (list filters included) or its body — answers an unknown, a deleted and another
/// workspace's alike: 422 `unprocessable_entity`, reason `invalid_reference`, naming the
/// field. A malformed id is `invalid_uuid` wherever a query or a body gives it (400 in a
/// query, 422 in a body, as every field of each), and a path's names nothing, as an
/// unknown one (404). Every ranged route (`from`..=`to`) takes 366 days counted with both
/// ends and refuses one more: 400 `out_of_range` naming `to`.
#[tokio::test]
async fn every_route_answers_each_situation_alike() {
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    let doc = crate::records::openapi(&h).await;
    let company = deleted_company(&h, &token).await;
    let account = cash_account(&h, &token, ACME_COMPANY).await;
    assert_eq!(send(&h, Method::DELETE, &format!("/v1/financial-accounts/{account}"), &token, None).await.status, 204);
    let companies: Situations =
        vec![("unknown", MISSING.into()), ("deleted", company), ("another's", BETA_COMPANY.into())];
    let accounts: Situations =
        vec![("unknown", MISSING.into()), ("deleted", account), ("another's", BETA_ACCOUNT.into())];
    let (mut wrong, mut swept, mut ranged) = (Vec::new(), 0, 0);
    for op in operations(&doc) {
        if op.method == Method::DELETE {
            continue;
        }
        let at = format!("{} {}", op.method, op.path);
        let plain = plain(&h, &token, &doc, &op).await;
        // A malformed id in the path names nothing, as an unknown one.
        if op.path.contains("{id}") && op.method == Method::GET {
            let mut sent = Sent { op: &op, path: String::new(), query: plain.query.clone(), body: None };
            for id in ["nope", MISSING] {
                sent.path = op.path.replace("{id}", id);
                let got = sent.answer(&h, &token).await;
                if (got.0, &got.1) != (404, &json!("not_found")) {
                    wrong.push(format!("{at} path id {id}: {got:?}"));
                }
            }
        }
        // References and malformed ids in the query.
        for (name, schema, _) in &op.query {
            let is_id = schema["format"] == "uuid";
            let situations = match names_company(name, schema) {
                Some(true) => companies.clone(),
                Some(false) => accounts.clone(),
                None => Vec::new(),
            };
            for (what, id) in
                situations.iter().map(|(w, id)| (*w, id.as_str())).chain(is_id.then_some(("malformed", "nope")))
            {
                let mut sent = Sent { op: &op, path: plain.path.clone(), query: plain.query.clone(), body: None };
                sent.query.retain(|(k, _)| k != name);
                sent.query.push((name.clone(), id.to_string()));
                let expected = match what {
                    "malformed" => (400, json!("bad_request"), Some(name.clone()), Some("invalid_uuid".to_string())),
                    _ => {
                        (422, json!("unprocessable_entity"), Some(name.clone()), Some("invalid_reference".to_string()))
                    }
                };
                let got = sent.answer(&h, &token).await;
                swept += 1;
                if got != expected {
                    wrong.push(format!("{at} query {name} {what}: {got:?}"));
                }
            }
        }
        // References and malformed ids in the body's own fields.
        if let (Some(schema), Some(body)) = (&op.body, &plain.body) {
            for (name, property) in schema["properties"].as_object().into_iter().flatten() {
                if EXCEPTIONS.iter().any(|(operation, field, _)| (*operation, *field) == (at.as_str(), name.as_str())) {
                    continue;
                }
                let property = resolved(property, schema);
                let situations = match names_company(name, property) {
                    Some(true) => companies.clone(),
                    Some(false) => accounts.clone(),
                    None => Vec::new(),
                };
                let is_id = is_id(name, property);
                for (what, id) in
                    situations.iter().map(|(w, id)| (*w, id.as_str())).chain(is_id.then_some(("malformed", "nope")))
                {
                    let mut body = body.clone();
                    body[name.as_str()] = json!(id);
                    let sent = Sent { op: &op, path: plain.path.clone(), query: plain.query.clone(), body: Some(body) };
                    let reason = if what == "malformed" { "invalid_uuid" } else { "invalid_reference" };
                    let expected = (422, json!("unprocessable_entity"), Some(name.clone()), Some(reason.to_string()));
                    let got = sent.answer(&h, &token).await;
                    swept += 1;
                    if got != expected {
                        wrong.push(format!("{at} body {name} {what}: {got:?}"));
                    }
                }
            }
        }
        // The 366-day rule of every ranged route.
        if ["from", "to"].iter().all(|p| op.query.iter().any(|(name, _, _)| name == p)) {
            ranged += 1;
            for (to, expected) in [
                ("2027-01-01", (200, Value::Null, None, None)),
                ("2027-01-02", (400, json!("bad_request"), Some("to".to_string()), Some("out_of_range".to_string()))),
            ] {
                let mut sent = Sent { op: &op, path: plain.path.clone(), query: plain.query.clone(), body: None };
                sent.query.retain(|(k, _)| k != "from" && k != "to");
                sent.query.extend([("from".to_string(), "2026-01-01".to_string()), ("to".to_string(), to.to_string())]);
                // A range of days: the cash flow by week, month or year has caps of its own.
                if op.query.iter().any(|(name, _, _)| name == "granularity") {
                    sent.query.push(("granularity".to_string(), "day".to_string()));
                }
                let got = sent.answer(&h, &token).await;
                if got != expected {
                    wrong.push(format!("{at} from 2026-01-01 to {to}: {got:?}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {swept} answers differ:\n{}", wrong.len(), wrong.join("\n"));
    assert!(swept >= 100 && ranged >= 3, "the sweep reached {swept} references and {ranged} ranged routes");
}
