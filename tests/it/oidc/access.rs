//! A deployment's people, end to end through the company's provider: a workspace created
//! by the command line with its owner's invitation, the owner signing in and inviting,
//! the invited person signing in from an MCP client and working within their role, the
//! role lowered (the next write with the same token refused), the app revoked on the
//! connected apps page (its next request refused); and the rules of who may change whom.

use http::{Method, StatusCode};
use serde_json::{json, Value};

use super::*;
use crate::oauth::{tools_list_status, RESOURCE};

/// The error code of a tool's `isError` result, wherever the result carries it.
fn error_code(result: &Value) -> Option<String> {
    let of = |v: &Value| v["error"]["code"].as_str().map(str::to_string);
    of(&result["structuredContent"]).or_else(|| {
        let text = result["content"][0]["text"].as_str()?;
        of(&serde_json::from_str(text).ok()?)
    })
}

fn keyed(request: Mcp, key: &str) -> Mcp {
    request.header("x-idempotency-key", key)
}

const ACCESS_SCOPES: &str = "finance.access finance.access.write finance.companies";

#[tokio::test]
async fn an_owner_created_by_the_command_line_invites_a_person_who_works_within_their_role_until_lowered_and_revoked() {
    let provider = Provider::start().await;
    let h = harness(&provider).await;
    let gama = workspace(&h, "Gama Serviços", "Dona@Gama.com.br").await;
    let api = format!("{PUBLIC_URL}/v1");

    // The owner signs in (her invitation names her address) from an app of the REST API.
    let dona = Person::new("sub-dona", "dona@gama.com.br");
    let owner = connect(&h, &provider, &dona, &api, Some(ACCESS_SCOPES)).await;
    let owner = owner["access_token"].as_str().unwrap().to_string();
    let members = send_ws(&h, Method::GET, "/v1/members", &owner, &gama, None).await;
    assert_eq!(members.status, 200, "{}", text(&members));
    let members = members.json()["data"].clone();
    assert_eq!(members.as_array().unwrap().len(), 1);
    assert_eq!((members[0]["email"].as_str(), members[0]["role"].as_str()), (Some("dona@gama.com.br"), Some("owner")));
    assert_eq!(members[0]["name"], "Pessoa sub-dona", "named by the provider's name claim");

    // She invites Caio as finance; a retry with the same key answers the first answer.
    let invite = || {
        keyed(
            rest(
                Method::POST,
                "/v1/invitations",
                &owner,
                Some(json!({"email": "Caio@Gama.com.br", "role": "finance"})),
            ),
            "caio-1",
        )
        .header("x-workspace-id", &gama)
        .build()
    };
    let first = h.send(invite()).await;
    assert_eq!(first.status, 201, "{}", text(&first));
    assert_eq!(
        (first.json()["status"].as_str(), first.json()["email"].as_str()),
        (Some("pending"), Some("caio@gama.com.br"))
    );
    let again = h.send(invite()).await;
    assert_eq!(again.json()["id"], first.json()["id"]);
    assert_eq!(again.header("x-idempotency-replayed"), Some("true"));

    // Caio signs in from an MCP client and works as finance.
    let caio = Person::new("sub-caio", "caio@gama.com.br");
    let (tokens, session) = connect_with_session(&h, &provider, &caio, RESOURCE, None).await;
    let mcp = tokens["access_token"].as_str().unwrap().to_string();
    assert_eq!(tools_list_status(&h, &mcp).await, 200);
    let listed = h.send(call("finance_workspaces_list", json!({})).path("/mcp").bearer(&mcp).build()).await.result();
    assert_eq!(listed["structuredContent"]["data"][0]["name"], "Gama Serviços", "{listed}");
    assert_eq!(listed["structuredContent"]["data"][0]["role"], "finance");
    let company = |name: &str| json!({"name": name, "cnpj": "12.345.678/0001-95", "workspace_id": gama});
    let created = h
        .send(call("finance_companies_create", company("Gama Serviços Ltda")).path("/mcp").bearer(&mcp).build())
        .await
        .result();
    assert_ne!(created["isError"], true, "{created}");
    let audited = count(&h, "SELECT COUNT(*) FROM audit_events WHERE action = 'companies.create' AND client_id IS NOT NULL AND workspace_id = $1", &gama).await;
    assert_eq!(audited, 1, "the write names the app it came through");

    // An invitation of Caio now is a conflict: he is a member.
    let member_again = h
        .send(
            rest(Method::POST, "/v1/invitations", &owner, Some(json!({"email": "caio@gama.com.br", "role": "viewer"})))
                .header("x-workspace-id", &gama)
                .build(),
        )
        .await;
    assert_eq!(member_again.status, 409, "{}", text(&member_again));
    assert_eq!(member_again.json()["error"]["details"]["reason"], "already_member");

    // The owner lowers him to viewer: his next write, same token, is refused by the role.
    let caio_id = send_ws(&h, Method::GET, "/v1/members", &owner, &gama, None).await.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "caio@gama.com.br")
        .map(|m| m["user_id"].as_str().unwrap().to_string())
        .unwrap();
    let lowered =
        send_ws(&h, Method::PATCH, &format!("/v1/members/{caio_id}"), &owner, &gama, Some(json!({"role": "viewer"})))
            .await;
    assert_eq!((lowered.status.as_u16(), lowered.json()["role"].as_str()), (200, Some("viewer")), "{}", text(&lowered));
    let refused = h
        .send(call("finance_companies_create", company("Outra Ltda")).path("/mcp").bearer(&mcp).build())
        .await
        .result();
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(error_code(&refused).as_deref(), Some("forbidden"), "{refused}");
    assert_eq!(tools_list_status(&h, &mcp).await, 200, "reads go on");

    // The owner sees the app acting for Caio among the workspace's.
    let seen = send_ws(&h, Method::GET, "/v1/connected-apps", &owner, &gama, None).await;
    assert_eq!(seen.status, 200, "{}", text(&seen));
    let caios: Vec<Value> =
        seen.json()["data"].as_array().unwrap().iter().filter(|a| a["user_id"] == caio_id.as_str()).cloned().collect();
    assert_eq!(caios.len(), 1, "{}", text(&seen));
    assert_eq!((caios[0]["mine"].as_bool(), caios[0]["client_name"].as_str()), (Some(false), Some("Agente de teste")));

    // Caio revokes the app on his connected apps page: its next request is refused.
    let page = h.send(to(Method::GET, "/oauth/apps").header("cookie", &session).build()).await;
    assert_eq!(page.status, 200, "{}", text(&page));
    let html = text(&page);
    assert!(html.contains("Agente de teste") && html.contains("127.0.0.1"), "client name and host: {html}");
    assert!(html.contains("Gama Serviços"), "the workspace it reaches: {html}");
    let revoke = |csrf: &str, grant: &str| {
        form("/oauth/apps", &[("grant", grant), ("csrf", csrf)]).header("cookie", &session).build()
    };
    let grant = field(&html, "grant");
    let forged = h.send(revoke("forged", &grant)).await;
    assert_eq!(forged.status, 403);
    assert_eq!(tools_list_status(&h, &mcp).await, 200, "a forged form revokes nothing");
    let revoked = h.send(revoke(&field(&html, "csrf"), &grant)).await;
    assert_eq!((revoked.status, location(&revoked).as_str()), (StatusCode::FOUND, "/oauth/apps?revoked=1"));
    assert_eq!(tools_list_status(&h, &mcp).await, 401);
    let refresh = crate::oauth::token(
        &h,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", tokens["client"].as_str().unwrap()),
        ],
    )
    .await;
    assert_eq!(refresh.status, 400, "nor does it refresh");
    let after = text(&h.send(to(Method::GET, "/oauth/apps?revoked=1").header("cookie", &session).build()).await);
    assert!(!after.contains("name=\"grant\""), "gone from the page: {after}");
    let audit =
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE action = 'apps.revoked' AND target_id = $1", &grant).await;
    assert_eq!(audit, 1);
}

/// `connect`, and the browser session it left.
async fn connect_with_session(
    h: &Harness,
    provider: &Provider,
    person: &Person,
    resource: &str,
    scope: Option<&str>,
) -> (Value, String) {
    let tokens = connect(h, provider, person, resource, scope).await;
    // The same browser signs in again for the page: a session of the same person.
    let (params, cookie) = begin(h, provider, "/oauth/apps").await;
    let back = callback(h, provider, &params, &cookie, claims(provider, person, &params), Signer::rsa()).await;
    assert_eq!(location(&back), "/oauth/apps", "the sign-in resumes the page");
    (tokens, set_cookie(&back, "kfin_session").unwrap())
}

async fn send_ws(h: &Harness, method: Method, path: &str, token: &str, workspace: &str, body: Option<Value>) -> Reply {
    h.send(rest(method, path, token, body).header("x-workspace-id", workspace).build()).await
}

#[tokio::test]
async fn only_an_owner_makes_or_unmakes_an_owner_the_last_one_stays_and_members_only_read() {
    let h = Harness::with_demo().await;
    let scoped = |user: &str| {
        h.token_with(user, Some("finance.access finance.access.write"), |c| {
            c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"))
        })
    };
    let (owner, finance) = (scoped(DEMO_OWNER), scoped(DEMO_FINANCE));
    let acme = DEMO_WORKSPACE_ACME;
    // The finance member sees who has access, and changes nothing.
    assert_eq!(send_ws(&h, Method::GET, "/v1/members", &finance, acme, None).await.status, 200);
    let invite = json!({"email": "nova@acme.com.br", "role": "viewer"});
    let refused = send_ws(&h, Method::POST, "/v1/invitations", &finance, acme, Some(invite.clone())).await;
    assert_eq!((refused.status.as_u16(), refused.json()["error"]["code"].as_str()), (403, Some("forbidden")));
    // A token without the scope: insufficient_scope, whoever holds it.
    let unscoped = h.api_token(DEMO_OWNER);
    let no_scope = send_ws(&h, Method::GET, "/v1/members", &unscoped, acme, None).await;
    assert_eq!(no_scope.json()["error"]["details"]["required"], "finance.access", "{}", text(&no_scope));
    // An admin may not make an owner.
    h.state
        .db
        .execute_script(&format!(
            "UPDATE memberships SET role = 'admin' WHERE user_id = '{DEMO_FINANCE}' AND workspace_id = '{acme}'"
        ))
        .await
        .unwrap();
    let as_owner = json!({"email": "outra@acme.com.br", "role": "owner"});
    let refused = send_ws(&h, Method::POST, "/v1/invitations", &finance, acme, Some(as_owner)).await;
    assert_eq!(refused.status, 403, "{}", text(&refused));
    let lowered = send_ws(
        &h,
        Method::PATCH,
        &format!("/v1/members/{DEMO_OWNER}"),
        &finance,
        acme,
        Some(json!({"role": "viewer"})),
    )
    .await;
    assert_eq!(lowered.status, 403, "an admin does not unmake an owner");
    assert_eq!(
        send_ws(&h, Method::POST, "/v1/invitations", &finance, acme, Some(invite)).await.status,
        201,
        "an admin invites"
    );
    // The only owner stays one, by her own hand too.
    let last =
        send_ws(&h, Method::PATCH, &format!("/v1/members/{DEMO_OWNER}"), &owner, acme, Some(json!({"role": "admin"})))
            .await;
    assert_eq!((last.status.as_u16(), last.json()["error"]["details"]["reason"].as_str()), (409, Some("last_owner")));
    let gone = send_ws(&h, Method::DELETE, &format!("/v1/members/{DEMO_OWNER}"), &owner, acme, None).await;
    assert_eq!(gone.status, 409);
    // Removing a member takes effect on their next request with the token they hold.
    let viewer_token = h.token(DEMO_VIEWER);
    assert_eq!(tools_list_status(&h, &viewer_token).await, 200);
    let removed = send_ws(&h, Method::DELETE, &format!("/v1/members/{DEMO_VIEWER}"), &owner, acme, None).await;
    assert_eq!(removed.status, 204, "{}", text(&removed));
    let workspaces =
        h.send(call("finance_workspaces_list", json!({})).path("/mcp").bearer(&viewer_token).build()).await.result();
    assert_eq!(workspaces["structuredContent"]["data"], json!([]), "{workspaces}");
    // Bad input: an address that is not one, a role that is not one, an unknown member.
    let bad =
        send_ws(&h, Method::POST, "/v1/invitations", &owner, acme, Some(json!({"email": "nobody", "role": "viewer"})))
            .await;
    assert_eq!(
        (bad.status.as_u16(), bad.json()["error"]["details"]["reason"].as_str()),
        (422, Some("invalid_email")),
        "{}",
        text(&bad)
    );
    let bad =
        send_ws(&h, Method::POST, "/v1/invitations", &owner, acme, Some(json!({"email": "a@b.co", "role": "god"})))
            .await;
    assert_eq!(bad.status, 422);
    let unknown = send_ws(
        &h,
        Method::PATCH,
        &format!("/v1/members/{}", uuid::Uuid::new_v4()),
        &owner,
        acme,
        Some(json!({"role": "viewer"})),
    )
    .await;
    assert_eq!(unknown.status, 404);
    // No tool reaches any of it.
    let listed =
        h.send(Mcp::modern("tools/list", json!({})).path("/mcp").bearer(&h.token(DEMO_OWNER)).build()).await.result();
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(!names.iter().any(|n| n.contains("member") || n.contains("invit") || n.contains("connected")), "{names:?}");
}

#[tokio::test]
async fn an_mcp_token_never_carries_the_scopes_of_who_has_access() {
    let provider = Provider::start().await;
    let h = harness(&provider).await;
    let client = register(&h, &[CALLBACK]).await;
    let (_, challenge) = pkce();
    let query = authorize_query(&client, CALLBACK, &challenge, &[("scope", "finance.access.write")]);
    let reply = h.send(to(Method::GET, &format!("/authorize?{query}")).build()).await;
    assert_eq!(reply.status, StatusCode::FOUND);
    let back = query_of(&location(&reply));
    assert_eq!(value_of(&back, "error").as_deref(), Some("invalid_scope"));
    assert_eq!(provider.discovery_fetches.load(std::sync::atomic::Ordering::SeqCst), 0, "refused before any sign-in");
}
