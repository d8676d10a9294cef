//! The companies tools: visibility by scope and role, schemas generated from the request
//! types, in-process dispatch with channel `mcp`, projection, idempotency, and the
//! confirmation of the destructive `finance_companies_delete` (SPEC §5, §5.2).

use crate::common;

use common::*;
use serde_json::{json, Value};

fn with_capabilities(mut m: Mcp, capabilities: Value) -> Mcp {
    let mut body: Value = serde_json::from_slice(&m.body).unwrap();
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities;
    m.body = body.to_string().into_bytes();
    m
}

/// A 2026 call from a client that declares form elicitation, with extra params.
fn confirmable(tool: &str, arguments: Value, extra: Value) -> Mcp {
    let mut m = with_capabilities(call(tool, arguments), json!({"elicitation": {}}));
    let mut body: Value = serde_json::from_slice(&m.body).unwrap();
    for (k, v) in extra.as_object().unwrap() {
        body["params"][k] = v.clone();
    }
    m.body = body.to_string().into_bytes();
    m
}

async fn tool_names(h: &Harness, token: &str) -> Vec<String> {
    let reply = h.send(Mcp::modern("tools/list", json!({})).bearer(token).build()).await;
    reply.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .filter(|name| name == "finance_workspaces_list" || name.starts_with("finance_companies_"))
        .collect()
}

async fn company_exists(h: &Harness, id: &str) -> bool {
    let row = sql::query("SELECT COUNT(*) FROM companies WHERE id = $1").bind(id).fetch_one(&h.state.db).await.unwrap();
    row.try_get::<i64, _>(0).unwrap() == 1
}

#[tokio::test]
async fn tools_list_shows_what_scope_and_role_allow() {
    let h = Harness::new().await;
    let all = [
        "finance_workspaces_list",
        "finance_companies_list",
        "finance_companies_get",
        "finance_companies_create",
        "finance_companies_update",
        "finance_companies_delete",
    ];
    assert_eq!(tool_names(&h, &h.token(DEMO_OWNER)).await, all);
    assert_eq!(tool_names(&h, &h.token(DEMO_VIEWER)).await, all[..3]);
    assert_eq!(tool_names(&h, &h.token_with(DEMO_OWNER, Some("finance.all"), |_| {})).await, all[..3]);
    assert_eq!(tool_names(&h, &h.token_with(DEMO_OWNER, Some(""), |_| {})).await, all[..1]);
    // finance may change companies but not delete them.
    assert_eq!(tool_names(&h, &h.token(DEMO_FINANCE)).await, all[..5]);
}

#[tokio::test]
async fn annotations_and_schemas_come_from_the_operations() {
    let h = Harness::new().await;
    let reply = h.send(Mcp::modern("tools/list", json!({})).bearer(&h.token(DEMO_OWNER)).build()).await;
    let tools: Vec<Value> = reply.result()["tools"].as_array().unwrap().clone();
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();
    let delete = tool("finance_companies_delete");
    assert_eq!(
        delete["annotations"],
        json!({"title": "Delete a company", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false})
    );
    assert_eq!(tool("finance_companies_list")["annotations"]["readOnlyHint"], true);
    assert_eq!(tool("finance_companies_update")["annotations"]["idempotentHint"], true);
    let create = meaning(&tool("finance_companies_create")["inputSchema"]);
    let request = meaning(&kobana_finance_mcp::ops::machinery::validate::schema_of::<
        kobana_finance_mcp::ops::companies::CompanyCreate,
    >());
    assert_eq!(create["required"], request["required"]);
    for field in request["properties"].as_object().unwrap().keys() {
        assert_eq!(create["properties"][field], request["properties"][field], "{field}");
    }
    assert!(create["properties"]["workspace_id"].is_object() && create["properties"]["idempotency_key"].is_object());
    assert_eq!(tool("finance_companies_update")["inputSchema"]["required"], json!(["id"]));
    assert_eq!(tool("finance_companies_list")["inputSchema"]["properties"]["limit"]["maximum"], 100);
}

#[tokio::test]
async fn list_and_get_through_the_tools_with_projection() {
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let reply = h
        .send(
            call(
                "finance_companies_list",
                json!({"filters": {"cnpj": {"in": ["11444777000161"]}}, "fields": ["name", "cnpj"]}),
            )
            .bearer(&token)
            .build(),
        )
        .await;
    let page = reply.result()["structuredContent"].clone();
    assert_eq!(page["data"], json!([{"name": "Acme Serviços Ltda", "cnpj": "11444777000161"}]));
    assert_eq!(page["meta"]["next_cursor"], Value::Null);
    let got = h.send(call("finance_companies_get", json!({"id": ACME_COMPANY})).bearer(&token).build()).await;
    assert_eq!(got.result()["structuredContent"]["name"], "Acme Comércio Ltda");
    // Another tenant's company is simply not found.
    let other = h.send(call("finance_companies_get", json!({"id": BETA_COMPANY})).bearer(&token).build()).await;
    assert_eq!(other.result()["isError"], true);
    assert_eq!(tool_error(&other.result())["code"], "not_found");
    let bad = h.send(call("finance_companies_list", json!({"limit": 101})).bearer(&token).build()).await;
    assert_eq!(bad.status, 200);
    assert_eq!(bad.result()["isError"], true);
    assert_eq!(tool_error(&bad.result())["code"], "bad_request");
}

#[tokio::test]
async fn create_through_the_tool_records_channel_mcp_and_honours_the_key() {
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let args = json!({"name": "Nova Ltda", "cnpj": "11444777000242", "idempotency_key": "k-1"});
    let first = h.send(call("finance_companies_create", args.clone()).bearer(&token).build()).await.result();
    assert_eq!(first.get("isError"), None, "{first}");
    let company = first["structuredContent"].clone();
    assert_eq!(company["created_via"], "mcp");
    assert_eq!(company["created_by"], DEMO_OWNER);
    let again = h.send(call("finance_companies_create", args).bearer(&token).build()).await.result();
    assert_eq!(again["structuredContent"], company);
    // The key with other arguments: the error the REST door answers, 409 `conflict`.
    let other = json!({"name": "Outra Ltda", "cnpj": "11444777000242", "idempotency_key": "k-1"});
    let reused = h.send(call("finance_companies_create", other).bearer(&token).build()).await.result();
    assert_eq!(reused["isError"], true, "{reused}");
    assert_eq!(tool_error(&reused)["code"], "conflict", "{reused}");
    assert_eq!(tool_error(&reused)["details"]["reason"], "idempotency_key_reused");
    let missing =
        h.send(call("finance_companies_create", json!({"name": "Sem CNPJ"})).bearer(&token).build()).await.result();
    assert_eq!(missing["isError"], true);
    assert_eq!(tool_error(&missing)["details"]["field"], "cnpj");
}

#[tokio::test]
async fn delete_needs_form_elicitation_on_2026() {
    let h = Harness::new().await;
    let reply = h
        .send(call("finance_companies_delete", json!({"id": ACME_SERVICES})).bearer(&h.token(DEMO_OWNER)).build())
        .await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.rpc_code(), Some(-32021));
    assert_eq!(reply.json()["error"]["data"], json!({"requiredCapabilities": {"elicitation": {}}}));
    assert!(company_exists(&h, ACME_SERVICES).await);
}

#[tokio::test]
async fn delete_on_the_2025_era_changes_nothing() {
    let h = Harness::new().await;
    let reply = h
        .send(
            Mcp::legacy(
                "tools/call",
                json!({"name": "finance_companies_delete", "arguments": {"id": ACME_SERVICES}}),
                Some("2025-06-18"),
            )
            .bearer(&h.token(DEMO_OWNER))
            .build(),
        )
        .await;
    let result = reply.result();
    assert_eq!(result["isError"], true);
    assert!(result["content"][0]["text"].as_str().unwrap().contains("2026-07-28"));
    assert!(company_exists(&h, ACME_SERVICES).await);
}

#[tokio::test]
async fn confirmed_delete_runs_exactly_once() {
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let args = json!({"id": ACME_SERVICES});
    let ask =
        h.send(confirmable("finance_companies_delete", args.clone(), json!({})).bearer(&token).build()).await.result();
    assert_eq!(ask["resultType"], "input_required");
    assert!(ask.get("ttlMs").is_none());
    let request = &ask["inputRequests"]["confirm"];
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["mode"], "form");
    let message = request["params"]["message"].as_str().unwrap();
    assert!(message.contains("Acme Serviços Ltda") && message.contains("CNPJ 11.444.777/0001-61"), "{message}");
    assert_eq!(request["params"]["requestedSchema"]["required"], json!(["confirm"]));
    assert!(company_exists(&h, ACME_SERVICES).await, "asking changes nothing");
    let state = ask["requestState"].clone();
    let accept = json!({"requestState": state, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    let done = h
        .send(confirmable("finance_companies_delete", args.clone(), accept.clone()).bearer(&token).build())
        .await
        .result();
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["structuredContent"], json!({"deleted": true, "id": ACME_SERVICES}));
    assert!(!company_exists(&h, ACME_SERVICES).await);
    // A replay of the accepted confirmation answers the first outcome, without running again.
    let replay = h.send(confirmable("finance_companies_delete", args, accept).bearer(&token).build()).await.result();
    assert_eq!(replay["structuredContent"], done["structuredContent"]);
    let audits: i64 = sql::query(
        "SELECT COUNT(*) FROM audit_events WHERE action = 'companies.delete' AND target_id = $1 AND channel = 'mcp'",
    )
    .bind(ACME_SERVICES)
    .fetch_one(&h.state.db)
    .await
    .unwrap()
    .try_get(0)
    .unwrap();
    assert_eq!(audits, 1, "executed exactly once");
}

#[tokio::test]
async fn declined_confirmation_changes_nothing() {
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let args = json!({"id": ACME_SERVICES});
    let ask =
        h.send(confirmable("finance_companies_delete", args.clone(), json!({})).bearer(&token).build()).await.result();
    for answer in [
        json!({"action": "decline"}),
        json!({"action": "cancel"}),
        json!({"action": "accept", "content": {"confirm": false}}),
    ] {
        let extra = json!({"requestState": ask["requestState"], "inputResponses": {"confirm": answer}});
        let result =
            h.send(confirmable("finance_companies_delete", args.clone(), extra).bearer(&token).build()).await.result();
        assert_eq!(result["isError"], true);
        assert!(result["content"][0]["text"].as_str().unwrap().contains("nothing changed"));
    }
    assert!(company_exists(&h, ACME_SERVICES).await);
    // A retry with the state but no answer asks again.
    let retry = h
        .send(
            confirmable("finance_companies_delete", args, json!({"requestState": ask["requestState"]}))
                .bearer(&token)
                .build(),
        )
        .await
        .result();
    assert_eq!(retry["resultType"], "input_required");
}

#[tokio::test]
async fn tampered_foreign_expired_or_mismatched_state_is_refused() {
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let args = json!({"id": ACME_SERVICES});
    // Another owner of the same workspace: the state is bound to the user who was asked.
    const SECOND_OWNER: &str = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a09";
    sql::query("INSERT INTO users (id, email, name, created_at) VALUES ($1, 'socio@demo.kobana.com.br', 'Sócia', '2026-11-30T00:00:00Z')")
        .bind(SECOND_OWNER).execute(&h.state.db).await.unwrap();
    sql::query("INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, 'owner', '2026-11-30T00:00:00Z')")
        .bind(DEMO_WORKSPACE_ACME).bind(SECOND_OWNER).execute(&h.state.db).await.unwrap();
    let ask =
        h.send(confirmable("finance_companies_delete", args.clone(), json!({})).bearer(&token).build()).await.result();
    let state = ask["requestState"].as_str().unwrap().to_string();
    let accept = |state: &str| json!({"requestState": state, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    // Tampered.
    let mut tampered = state.clone();
    tampered.insert(3, 'x');
    // Expired: a correctly signed state whose expiry has passed.
    let expired = {
        use aws_lc_rs::hmac;
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let (payload, _) = state.split_once('.').unwrap();
        let mut claims: Value = serde_json::from_slice(&b64.decode(payload).unwrap()).unwrap();
        claims["e"] = json!(1);
        let payload = serde_json::to_vec(&claims).unwrap();
        let key = kobana_finance_mcp::auth::keys::Keys::from_secret(SECRET, None).state;
        let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &key), &payload);
        format!("{}.{}", b64.encode(&payload), b64.encode(tag.as_ref()))
    };
    let cases = [
        (h.token(DEMO_OWNER), args.clone(), tampered),
        (h.token(DEMO_OWNER), json!({"id": ACME_COMPANY}), state.clone()),
        (h.token(SECOND_OWNER), args.clone(), state.clone()),
        (h.token(DEMO_OWNER), args.clone(), expired),
    ];
    for (who, arguments, state) in cases {
        let reply =
            h.send(confirmable("finance_companies_delete", arguments, accept(&state)).bearer(&who).build()).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.rpc_code(), Some(-32602), "{}", String::from_utf8_lossy(&reply.bytes));
    }
    assert!(company_exists(&h, ACME_SERVICES).await);
    let _ = token;
}

#[tokio::test]
async fn confirmed_delete_of_a_company_in_use_is_an_error_and_replays_as_one() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_OWNER);
    let args = json!({"id": ACME_COMPANY});
    let ask =
        h.send(confirmable("finance_companies_delete", args.clone(), json!({})).bearer(&token).build()).await.result();
    let accept = json!({"requestState": ask["requestState"], "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    let first = h
        .send(confirmable("finance_companies_delete", args.clone(), accept.clone()).bearer(&token).build())
        .await
        .result();
    assert_eq!(first["isError"], true);
    assert_eq!(tool_error(&first)["details"]["reason"], "in_use");
    let replay = h.send(confirmable("finance_companies_delete", args, accept).bearer(&token).build()).await.result();
    assert_eq!(tool_error(&replay), tool_error(&first), "the stored refusal, replayed");
    assert!(company_exists(&h, ACME_COMPANY).await);
}

#[tokio::test]
async fn record_templates_read_through_the_get_operation() {
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let templates = h.send(Mcp::modern("resources/templates/list", json!({})).bearer(&token).build()).await.result();
    let companies =
        templates["resourceTemplates"].as_array().unwrap().iter().find(|t| t["name"] == "companies").unwrap();
    assert_eq!(companies["uriTemplate"], "kobana://finance/companies/{id}");
    let read = |uri: String| Mcp::modern("resources/read", json!({"uri": uri})).bearer(&token).build();
    let reply = h.send(read(format!("kobana://finance/companies/{ACME_COMPANY}"))).await.result();
    let record: Value = serde_json::from_str(reply["contents"][0]["text"].as_str().unwrap()).unwrap();
    let via_tool =
        h.send(call("finance_companies_get", json!({"id": ACME_COMPANY})).bearer(&token).build()).await.result();
    assert_eq!(record, via_tool["structuredContent"]);
    assert_eq!(reply["contents"][0]["mimeType"], "application/json");
    // Another tenant's record and a malformed id read as not found.
    for uri in [format!("kobana://finance/companies/{BETA_COMPANY}"), "kobana://finance/companies/nope".to_string()] {
        let missing = h.send(read(uri.clone())).await;
        assert_eq!(missing.rpc_code(), Some(-32602), "{uri}");
        assert_eq!(missing.json()["error"]["data"]["uri"], uri);
    }
    // A token without the read scope sees no companies template and reads nothing.
    let blind = h.token_with(DEMO_OWNER, Some("finance.payables"), |_| {});
    let none = h.send(Mcp::modern("resources/templates/list", json!({})).bearer(&blind).build()).await.result();
    assert!(!none["resourceTemplates"].as_array().unwrap().iter().any(|t| t["name"] == "companies"));
    let refused = h
        .send(
            Mcp::modern("resources/read", json!({"uri": format!("kobana://finance/companies/{ACME_COMPANY}")}))
                .bearer(&blind)
                .build(),
        )
        .await;
    assert_eq!(refused.rpc_code(), Some(-32602));
}

#[tokio::test]
async fn completion_suggests_record_ids_by_name_prefix_within_the_callers_workspaces() {
    let h = Harness::new().await;
    let complete = |token: &str, value: &str| {
        Mcp::modern("completion/complete", json!({"ref": {"type": "ref/resource", "uri": "kobana://finance/companies/{id}"}, "argument": {"name": "id", "value": value}}))
            .bearer(token)
            .build()
    };
    let owner = h.token(DEMO_OWNER);
    let reply = h.send(complete(&owner, "acme s")).await.result();
    assert_eq!(reply["completion"]["values"], json!([ACME_SERVICES]));
    let all = h.send(complete(&owner, "")).await.result();
    assert_eq!(all["completion"]["values"], json!([ACME_COMPANY, ACME_SERVICES]));
    assert_eq!(all["completion"]["hasMore"], false);
    let wildcard = h.send(complete(&owner, "%")).await.result();
    assert_eq!(wildcard["completion"]["values"], json!([]), "LIKE wildcards are literal");
    let beta = h.send(complete(&h.token(DEMO_BETA_OWNER), "acme")).await.result();
    assert_eq!(beta["completion"]["values"], json!([]), "another tenant's records are never suggested");
    let wrong = h.send(Mcp::modern("completion/complete", json!({"ref": {"type": "ref/resource", "uri": "kobana://finance/companies/{id}"}, "argument": {"name": "other", "value": ""}})).bearer(&owner).build()).await;
    assert_eq!(wrong.rpc_code(), Some(-32602));
}
