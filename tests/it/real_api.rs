//! The served `/v1` against the real finance API's OpenAPI document
//! (`../shared/reference/real-api/finance-v1.json`): for every operation both serve, the
//! query parameters, the request fields (names, JSON types, enums, required list) and
//! the answer's fields. What this product adds carries `x-kobana-extension`; what it
//! still lacks is listed below, each with the work that brings it, and the list is
//! exact: a difference not in it fails, and so does an entry nothing matches any more.
//! A probe then sends every documented filter and sort of the real document to the
//! server. And the other way: the bodies this product sends Kobana's banking API (its
//! OpenAPI document `banking-v2.json`, beside the first) are the ones that document
//! takes, each payment kind at its documented path.

use std::collections::{BTreeMap, BTreeSet};

use http::Method;
use serde_json::{json, Value};

use crate::common::*;

/// Where the real document lives, beside the repository.
const REAL_DOCUMENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/reference/real-api/finance-v1.json");

/// Where the banking API's document lives, beside it.
const BANKING_DOCUMENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/reference/real-api/banking-v2.json");

/// The real finance document (see [`reference`]).
fn real_document() -> Option<Value> {
    reference(REAL_DOCUMENT)
}

/// A reference document, or `None` (loudly) where the reference is not beside the
/// repository; CI always has it.
fn reference(path: &str) -> Option<Value> {
    match std::fs::read(path) {
        Ok(bytes) => Some(serde_json::from_slice(&bytes).expect("the reference document is JSON")),
        Err(e) if std::env::var_os("CI").is_some() => panic!("{path}: {e}"),
        Err(e) => {
            eprintln!("\n*** SKIPPED: the reference document is not at {path} ({e}) ***\n");
            None
        }
    }
}

/// The real operations not served yet, and the issue-sized work that brings them.
const NOT_SERVED: &[(&str, &str)] = &[];

/// A difference left: on the operations under `collection`, in `part` (`query`,
/// `request`, `response`), `what` (`missing`, `enum`, `type`) of each of `fields`.
struct Gap {
    collection: &'static str,
    part: &'static str,
    what: &'static str,
    fields: &'static [&'static str],
    why: &'static str,
}

const GAPS: &[Gap] = &[
    Gap {
        collection: "/v1/automatic-rules",
        part: "query",
        what: "enum",
        fields: &["active"],
        why: "the real document types this one `active` filter boolean, its others the enum \"true\"/\"false\"; the \
query string is the same text either way, and every list here documents it as the others",
    },
    Gap {
        collection: "/v1/financial-accounts",
        part: "request",
        what: "missing",
        fields: &["company_id"],
        why: "an account's company is fixed at creation here",
    },
    Gap {
        collection: "/v1/payables",
        part: "request",
        what: "missing",
        fields: &["recurrence_period", "total_installments", "type"],
        why: "a series is shaped at creation; a PATCH changes one record",
    },
    Gap {
        collection: "/v1/receivables",
        part: "request",
        what: "missing",
        fields: &["recurrence_period", "total_installments", "type"],
        why: "a series is shaped at creation; a PATCH changes one record",
    },
    Gap {
        collection: "/v1/payables",
        part: "request",
        what: "enum",
        fields: &["recurrence_period"],
        why: "the periods a series steps by are named (the real one is free text)",
    },
    Gap {
        collection: "/v1/receivables",
        part: "request",
        what: "enum",
        fields: &["recurrence_period"],
        why: "the periods a series steps by are named (the real one is free text)",
    },
    Gap {
        collection: "/v1/payables",
        part: "request",
        what: "type",
        fields: &["discount_amount", "interest_amount", "ticket_amount"],
        why: "amounts are 2-decimal strings, never JSON numbers",
    },
    Gap {
        collection: "/v1/receivables",
        part: "request",
        what: "type",
        fields: &["discount_amount", "interest_amount", "ticket_amount"],
        why: "amounts are 2-decimal strings, never JSON numbers",
    },
    Gap { collection: "/v1/taxes", part: "query", what: "enum", fields: &["sort"], why: "one more sort: updated_at" },
    Gap {
        collection: "/v1/reconciliations",
        part: "response",
        what: "extra",
        fields: &["created_at"],
        why: "a group's audit stamps, as every record's (the rest are marked)",
    },
];

/// `schema` with its `$ref`s followed and an `allOf` merged into one object.
fn resolve(doc: &Value, schema: &Value) -> Value {
    if let Some(name) = schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")) {
        return resolve(doc, &doc["components"]["schemas"][name]);
    }
    if let Some(parts) = schema["allOf"].as_array() {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for part in parts.iter().map(|p| resolve(doc, p)) {
            properties.extend(part["properties"].as_object().cloned().unwrap_or_default());
            required.extend(part["required"].as_array().cloned().unwrap_or_default());
        }
        return json!({ "type": "object", "properties": properties, "required": required });
    }
    schema.clone()
}

/// The JSON types a schema allows, null aside.
fn types(schema: &Value) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = match &schema["type"] {
        Value::String(t) => [t.clone()].into(),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => BTreeSet::new(),
    };
    for key in ["anyOf", "oneOf"] {
        for branch in schema[key].as_array().into_iter().flatten() {
            out.extend(types(branch));
        }
    }
    out.remove("null");
    out
}

/// The values a schema enumerates, null aside.
fn values(schema: &Value) -> BTreeSet<String> {
    let mut out: BTreeSet<String> =
        schema["enum"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect();
    for key in ["anyOf", "oneOf"] {
        for branch in schema[key].as_array().into_iter().flatten() {
            out.extend(values(branch));
        }
    }
    out
}

/// The fields of a body schema (a page's: its rows'), and its required list.
fn fields(doc: &Value, schema: &Value) -> (BTreeMap<String, Value>, BTreeSet<String>) {
    let schema = resolve(doc, schema);
    if schema["properties"]["data"].is_object() && schema["properties"]["meta"].is_object() {
        return fields(doc, &schema["properties"]["data"]["items"]);
    }
    let properties = schema["properties"].as_object().cloned().unwrap_or_default();
    let required = schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string);
    (properties.into_iter().map(|(k, v)| (k, resolve(doc, &v))).collect(), required.collect())
}

fn json_body<'a>(operation: &'a Value, at: &str) -> &'a Value {
    let body = if at == "request" { &operation["requestBody"] } else { &operation["responses"][at] };
    &body["content"]["application/json"]["schema"]
}

fn marked(schema: &Value) -> bool {
    schema.get("x-kobana-extension").is_some()
}

/// A field whose form differs from the real document's on purpose says so
/// (`x-kobana-difference`): the dates, `format: date` where the real document has
/// `date-time`.
fn noted(schema: &Value) -> bool {
    schema.get("x-kobana-difference").is_some_and(Value::is_string)
        || ["anyOf", "oneOf"].iter().any(|key| schema[key].as_array().into_iter().flatten().any(noted))
}

/// The calendar `format` of a schema (of its non-null branch): `date` or `date-time`.
fn format(schema: &Value) -> Option<&str> {
    let own = schema["format"].as_str().filter(|f| matches!(*f, "date" | "date-time"));
    own.or_else(|| {
        ["anyOf", "oneOf"].iter().find_map(|key| schema[key].as_array().into_iter().flatten().find_map(format))
    })
}

/// One difference: `(operation, part, field, what)`.
type Difference = (String, &'static str, String, &'static str);

/// Every difference between the operations both documents have.
fn differences(real: &Value, ours: &Value) -> BTreeSet<Difference> {
    let mut found = BTreeSet::new();
    for (path, item) in real["paths"].as_object().unwrap() {
        for (method, theirs) in item.as_object().unwrap() {
            let Some(mine) = ours["paths"][path].get(method.as_str()) else { continue };
            let at = format!("{} {path}", method.to_uppercase());
            let mut note = |part: &'static str, field: &str, what: &'static str| {
                found.insert((at.clone(), part, field.to_string(), what));
            };
            let query = |operation: &Value| -> BTreeMap<String, Value> {
                let parameters = operation["parameters"].as_array().into_iter().flatten();
                let queried = parameters.filter(|p| p["in"] == "query");
                queried.map(|p| (p["name"].as_str().unwrap_or_default().to_string(), p.clone())).collect()
            };
            let (their_query, my_query) = (query(theirs), query(mine));
            for (name, parameter) in &their_query {
                match my_query.get(name) {
                    None => note("query", name, "missing"),
                    Some(mine) if values(&parameter["schema"]) != values(&mine["schema"]) => {
                        note("query", name, "enum")
                    }
                    Some(_) => {}
                }
            }
            for (name, parameter) in &my_query {
                if !their_query.contains_key(name) && !marked(parameter) && name != "workspace_id" {
                    note("query", name, "extra");
                }
            }
            for (part, key) in [("request", "request"), ("response", "200"), ("response", "201")] {
                let (theirs, mine) = (json_body(theirs, key), json_body(mine, key));
                if theirs.is_null() || mine.is_null() {
                    if !theirs.is_null() {
                        note(part, key, "missing");
                    }
                    continue;
                }
                let ((their_fields, their_required), (my_fields, my_required)) =
                    (fields(real, theirs), fields(ours, mine));
                for (name, schema) in &their_fields {
                    let Some(mine) = my_fields.get(name) else {
                        note(part, name, "missing");
                        continue;
                    };
                    let (their_types, my_types) = (types(schema), types(mine));
                    if !their_types.is_empty() && !my_types.is_empty() && their_types != my_types {
                        note(part, name, "type");
                    }
                    if values(schema) != values(mine) {
                        note(part, name, "enum");
                    }
                    if format(schema) != format(mine) && format(mine).is_some() && !noted(mine) {
                        note(part, name, "format");
                    }
                }
                for (name, schema) in &my_fields {
                    if !their_fields.contains_key(name) && !marked(schema) {
                        note(part, name, "extra");
                    }
                }
                if part == "request" && their_required != my_required {
                    note(part, "(required)", "required");
                }
            }
        }
    }
    found
}

#[tokio::test]
async fn the_served_operations_are_the_real_documents_but_for_the_gaps_listed() {
    let Some(real) = real_document() else { return };
    let h = Harness::new().await;
    let ours = h.send(Mcp::raw("").method(Method::GET).path("/v1/openapi.json").build()).await.json();
    let operations = |doc: &Value| -> BTreeSet<String> {
        let paths = doc["paths"].as_object().unwrap();
        paths
            .iter()
            .flat_map(|(path, item)| item.as_object().unwrap().keys().map(move |m| format!("{m} {path}")))
            .collect()
    };
    let (theirs, mine) = (operations(&real), operations(&ours));
    let unserved: BTreeSet<String> = theirs.difference(&mine).cloned().collect();
    let listed: BTreeSet<String> = NOT_SERVED.iter().map(|(op, _)| op.to_string()).collect();
    assert_eq!(unserved, listed, "the real operations not served");
    assert_eq!(theirs.intersection(&mine).count(), 79);
    for extra in mine.difference(&theirs) {
        let (method, path) = extra.split_once(' ').unwrap();
        let documented = &ours["paths"][path][method];
        assert!(marked(documented) || path == "/v1/openapi.json", "{extra} is not the real API's and not marked");
    }

    let found = differences(&real, &ours);
    let known = |(at, part, field, what): &Difference| {
        GAPS.iter().any(|g| {
            let path = at.split_once(' ').map_or("", |(_, p)| p);
            (path == g.collection || path.starts_with(&format!("{}/", g.collection)))
                && g.part == *part
                && g.what == *what
                && g.fields.contains(&field.as_str())
        })
    };
    let unknown: Vec<String> = found
        .iter()
        .filter(|d| !known(d))
        .map(|(at, part, field, what)| format!("{at}: {part} {field} {what}"))
        .collect();
    assert!(unknown.is_empty(), "{} difference(s) from the real document:\n{}", unknown.len(), unknown.join("\n"));
    for gap in GAPS {
        for field in gap.fields {
            let seen = found.iter().any(|(at, part, f, what)| {
                at.contains(gap.collection) && *part == gap.part && f == field && *what == gap.what
            });
            assert!(
                seen,
                "{} {} {field} {} ({}) is no longer a difference: remove it",
                gap.collection, gap.part, gap.what, gap.why
            );
        }
    }
}

/// The query filters of the real document this product does not take yet (see [`GAPS`]).
const NOT_TAKEN: &[&str] = &[];

/// `text` as a query value: every byte but the unreserved ones percent-encoded.
fn encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A value a parameter of the real document takes: each of its enum, else one of its type.
fn samples(name: &str, schema: &Value) -> Vec<String> {
    let enumerated = values(schema);
    if !enumerated.is_empty() {
        return enumerated.into_iter().collect();
    }
    // The demo's: a report or a list filtered by a company, an account, a person, a
    // category or a center names one the workspace has (another is an invalid reference).
    if let Some(id) = crate::references::live_id(name).filter(|_| schema["format"] == "uuid") {
        return vec![id.to_string()];
    }
    if let Some(example) = schema["example"].as_str() {
        return vec![encoded(example)];
    }
    let sample = match (schema["format"].as_str(), types(schema).iter().next().map(String::as_str)) {
        (Some("uuid"), _) => "b1110000-0001-4000-8000-000000000001",
        (_, Some("integer")) => "1",
        (_, Some("boolean")) => "true",
        _ if name.ends_with("_date") || name.ends_with("_at") => "2026-11-01",
        _ if name == "amount" => "100.00",
        _ if name == "tz" => "America/Sao_Paulo",
        _ => "x",
    };
    vec![sample.to_string()]
}

#[tokio::test]
async fn every_filter_and_sort_of_the_real_document_is_taken() {
    let Some(real) = real_document() else { return };
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    let ours = h.send(Mcp::raw("").method(Method::GET).path("/v1/openapi.json").build()).await.json();
    let mut refused = Vec::new();
    let mut sent = 0;
    for (path, item) in real["paths"].as_object().unwrap() {
        let Some(operation) = item.get("get") else { continue };
        if path.contains('{') || ours["paths"][path]["get"].is_null() {
            continue;
        }
        let parameters = operation["parameters"].as_array().into_iter().flatten().filter(|p| p["in"] == "query");
        // The required parameters (a report's range) go with every query of the path.
        let required: Vec<String> = parameters
            .clone()
            .filter(|p| p["required"] == true)
            .map(|p| {
                let name = p["name"].as_str().unwrap();
                format!("{name}={}", samples(name, &p["schema"])[0])
            })
            .collect();
        let mut queries = Vec::new();
        for parameter in parameters.filter(|p| p["required"] != true) {
            let name = parameter["name"].as_str().unwrap();
            match name {
                "limit" => queries.push("limit=100".to_string()),
                "cursor" => {}
                _ if NOT_TAKEN.contains(&name) => {}
                // The aggregates' period comes in pairs.
                "month" => queries.push("month=11&year=2026".to_string()),
                "start_date" => queries.push("start_date=2026-11-01&end_date=2026-11-30".to_string()),
                "year" | "end_date" => {}
                _ => queries.extend(samples(name, &parameter["schema"]).into_iter().map(|v| format!("{name}={v}"))),
            }
        }
        if queries.is_empty() {
            queries.push(String::new());
        }
        for query in queries {
            let query =
                required.iter().cloned().chain((!query.is_empty()).then_some(query)).collect::<Vec<_>>().join("&");
            sent += 1;
            let reply = h.send(rest(Method::GET, &format!("{path}?{query}"), &token, None).build()).await;
            if reply.status != 200 {
                refused.push(format!("{path}?{query}: {} {}", reply.status, String::from_utf8_lossy(&reply.bytes)));
            }
        }
    }
    assert!(sent > 150, "{sent} queries sent");
    assert!(refused.is_empty(), "{} of the real document's queries refused:\n{}", refused.len(), refused.join("\n"));
}

/// Where `value` departs from `schema`, each at its place: a member the schema does not
/// name, a required one missing, a null where the schema is not nullable, a type or a
/// value it does not take. Of a `oneOf`, the branch it departs from least.
fn departures(doc: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let schema = resolve(doc, schema);
    if value.is_null() {
        let null_type =
            |s: &Value| s["type"] == "null" || s["type"].as_array().is_some_and(|t| t.contains(&json!("null")));
        let branches = ["anyOf", "oneOf"].iter().flat_map(|key| schema[key].as_array().cloned().unwrap_or_default());
        if schema["nullable"] != true && !null_type(&schema) && !branches.clone().any(|b| null_type(&b)) {
            out.push(format!("{at}: null, not nullable"));
        }
        return;
    }
    if let Some(branches) = schema["oneOf"].as_array() {
        let fits = branches.iter().map(|branch| {
            let mut found = Vec::new();
            departures(doc, branch, value, at, &mut found);
            found
        });
        out.extend(fits.min_by_key(Vec::len).unwrap_or_default());
        return;
    }
    let kind = match value {
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        _ => "object",
    };
    let allowed = types(&schema);
    let taken = allowed.is_empty() || allowed.contains(kind) || (kind == "integer" && allowed.contains("number"));
    if !taken {
        out.push(format!("{at}: {kind}, not {allowed:?}"));
    }
    let enumerated = values(&schema);
    if let Some(text) = value.as_str().filter(|t| !enumerated.is_empty() && !enumerated.contains(*t)) {
        out.push(format!("{at}: {text:?} not in {enumerated:?}"));
    }
    let Some(members) = value.as_object() else { return };
    if let Some(properties) = schema["properties"].as_object() {
        for (name, member) in members {
            match properties.get(name) {
                Some(property) => departures(doc, property, member, &format!("{at}.{name}"), out),
                None => out.push(format!("{at}.{name}: not in the document")),
            }
        }
    }
    for required in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if !members.contains_key(required) {
            out.push(format!("{at}.{required}: required, not sent"));
        }
    }
}

#[tokio::test]
async fn the_payments_sent_to_the_bank_are_the_banking_documents_bodies_at_its_paths() {
    use kobana_finance_mcp::gateway::PaymentKind;

    let Some(banking) = reference(BANKING_DOCUMENT) else { return };
    for kind in PaymentKind::ALL {
        let path = kind.path();
        assert!(banking["paths"][path]["post"].is_object(), "POST {path} is not in the banking document");
        assert!(banking["paths"][format!("{path}/{{uid}}/cancel")]["put"].is_object(), "PUT {path}/{{uid}}/cancel");
    }
    // One payable of each kind, sent through the product to the stand-in.
    let (h, standin) = crate::common::gateway::with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    let pix = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de \
               Tal6008BRASILIA62070503***63041D3D";
    let mut bills = vec![ACME_RENT_DECEMBER.to_string(), ACME_SUPPLIES_PENDING.to_string()];
    for bill in &bills {
        crate::dispatch::from_checking(&h, &token, bill).await;
    }
    for (description, coordinates) in [
        ("Pix copia e cola", json!({"payment_method_kind": "pix", "pix_copia_e_cola": pix})),
        (
            "Conta de água",
            json!({"payment_method_kind": "utility", "barcode": "84670000001435900240200240500024384221010811"}),
        ),
        ("Frete", crate::dispatch::ted_coordinates()),
        ("DARF", crate::dispatch::darf_coordinates()),
    ] {
        bills.push(crate::dispatch::official(&h, &token, description, "143.59", coordinates).await);
    }
    for (n, bill) in bills.iter().enumerate() {
        let sent = crate::dispatch::dispatch(&h, &token, bill, &format!("kind-{n}")).await;
        assert_eq!(sent.status, 200, "{}", crate::common::text(&sent));
    }
    let requests = standin.payment_requests();
    let mut paths: Vec<&str> = requests.iter().map(|(path, _)| path.as_str()).collect();
    paths.sort();
    let mut every: Vec<&str> = PaymentKind::ALL.iter().map(|k| k.path()).collect();
    every.sort();
    assert_eq!(paths, every, "one payment of each kind");
    for (path, body) in &requests {
        let schema = &banking["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"];
        let mut found = Vec::new();
        departures(&banking, schema, body, path, &mut found);
        assert!(found.is_empty(), "POST {path} {body}:\n{}", found.join("\n"));
    }
}

/// What a client generated from the real document, strict about types, reads: each
/// answer below against the document's schema of its operation — no null where the
/// document has none, every required member, each member's type and values. Members the
/// document lacks are this product's extensions (marked, see the test above), which such
/// a client passes over; a date answered as `YYYY-MM-DD` where the document says
/// `date-time` is the deliberate difference each date's schema notes.
#[tokio::test]
async fn a_strict_client_of_the_real_document_reads_the_answers() {
    let Some(real) = real_document() else { return };
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    let transfer = json!({
        "from_account_id": ACME_CHECKING_ACCOUNT, "to_account_id": ACME_CASH_ACCOUNT, "amount": "10.00",
        "occurred_at": "2026-11-03", "description": "Troco do caixa"
    });
    let created = h.send(rest(Method::POST, "/v1/transfers", &token, Some(transfer)).build()).await;
    assert_eq!(created.status, 201, "{}", text(&created));
    let transfer_id = created.json()["transfer_id"].as_str().unwrap().to_string();
    let mut answers = vec![("post", "/v1/transfers".to_string(), "/v1/transfers", 201, created.json())];
    for (path, documented) in [
        (format!("/v1/transfers/{transfer_id}"), "/v1/transfers/{id}"),
        (format!("/v1/financial-accounts/{ACME_CHECKING_ACCOUNT}"), "/v1/financial-accounts/{id}"),
        ("/v1/financial-accounts".to_string(), "/v1/financial-accounts"),
        ("/v1/banks?code[in]=001,341".to_string(), "/v1/banks"),
    ] {
        let reply = h.send(rest(Method::GET, &path, &token, None).build()).await;
        assert_eq!(reply.status, 200, "{path}: {}", text(&reply));
        answers.push(("get", path, documented, 200, reply.json()));
    }
    let mut found = Vec::new();
    for (method, path, documented, status, answer) in &answers {
        let schema = &real["paths"][documented][method]["responses"][status.to_string()]["content"]["application/json"]
            ["schema"];
        assert!(schema.is_object(), "{method} {documented} {status} is in the real document");
        departures(&real, schema, answer, &format!("{method} {path}"), &mut found);
    }
    found.retain(|departure| !departure.ends_with("not in the document"));
    assert!(found.is_empty(), "answers a strict client of the real document refuses:\n{}", found.join("\n"));
    assert_eq!(answers[0].4["competence_date"], "2026-11-03", "a transfer's competence date is its date");
}
