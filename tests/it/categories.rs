//! `/v1/categories`: the three-level tree (depth, type and company of the parent),
//! type cascade, no re-parenting, delete rules (`has_children`, `in_use` with usage),
//! validation, idempotency, pagination and filters, isolation, scope and role checks,
//! provenance and audit — on SQLite and PostgreSQL.

use crate::common;

use common::*;
use http::Method;
use serde_json::{json, Value};

/// Creates a category and returns it (asserting 201).
async fn create(h: &Harness, token: &str, body: Value) -> Value {
    create_at(h, "/v1/categories", token, body).await
}

/// `POST /v1/categories` with `body`.
async fn post(h: &Harness, token: &str, body: Value) -> Reply {
    send(h, Method::POST, "/v1/categories", token, Some(body)).await
}

/// The category `cid`, as `GET` answers it.
async fn get(h: &Harness, token: &str, cid: &str) -> Value {
    send(h, Method::GET, &format!("/v1/categories/{cid}"), token, None).await.json()
}

/// `PATCH` of the category `cid` with `body`.
async fn patch(h: &Harness, token: &str, cid: &str, body: Value) -> Reply {
    send(h, Method::PATCH, &format!("/v1/categories/{cid}"), token, Some(body)).await
}

/// A root (level 1), a child (2) and a grandchild (3) in Acme Serviços.
async fn tree(h: &Harness, token: &str, kind: &str) -> (String, String, String) {
    let root = id(&create(h, token, json!({"company_id": ACME_SERVICES, "name": "Despesas", "type": kind})).await);
    let child =
        id(&create(h, token, json!({"company_id": ACME_SERVICES, "name": "Pessoal", "type": kind, "parent_id": root}))
            .await);
    let grandchild = id(&create(
        h,
        token,
        json!({"company_id": ACME_SERVICES, "name": "Salários", "type": kind, "parent_id": child}),
    )
    .await);
    (root, child, grandchild)
}

/// A transaction, a payable and a receivable of Acme Serviços in the category.
async fn use_category(h: &Harness, category: &str) {
    let now = "2026-11-30T12:00:00Z";
    let account = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'Caixa', 'cash', $4, $4, 'system', 'system')",
        &[&account, DEMO_WORKSPACE_ACME, ACME_SERVICES, now],
    )
    .await;
    exec(
        h,
        "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents, occurred_at,
                                             transaction_type, category_id, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Folha', 150000, '2026-11-05', 'debit', $5, $6, $6, 'system', 'system')",
        &[&uuid::Uuid::new_v4().to_string(), DEMO_WORKSPACE_ACME, ACME_SERVICES, &account, category, now],
    )
    .await;
    for kind in ["payable", "receivable"] {
        exec(
            h,
            "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date, billing_type,
                                   status, category_id, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, 'Conta', 10000, '2026-12-10', '2026-12-01', 'normal', 'pending', $5, $6, $6, 'system', 'system')",
            &[&uuid::Uuid::new_v4().to_string(), DEMO_WORKSPACE_ACME, ACME_SERVICES, kind, category, now],
        )
        .await;
    }
}

#[tokio::test]
async fn children_are_one_level_below_their_parent_and_at_most_level_three() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let (root, child, grandchild) = tree(&h, &token, "debit").await;
    for (cid, level, parent) in [(&root, 1, Value::Null), (&child, 2, json!(root)), (&grandchild, 3, json!(child))] {
        let got = get(&h, &token, cid).await;
        assert_eq!((got["level"].clone(), got["parent_id"].clone()), (json!(level), parent));
    }
    let reply = post(
        &h,
        &token,
        json!({"company_id": ACME_SERVICES, "name": "Bônus", "type": "debit", "parent_id": grandchild}),
    )
    .await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
    assert_eq!(reply.json()["error"]["details"]["reason"], "max_depth");
    assert_eq!(count(&h, "SELECT COUNT(*) FROM categories WHERE parent_id = $1", &grandchild).await, 0);
}

#[tokio::test]
async fn a_child_has_the_type_of_its_parent() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let root = id(&create(&h, &token, json!({"company_id": ACME_SERVICES, "name": "Despesas", "type": "debit"})).await);
    let reply =
        post(&h, &token, json!({"company_id": ACME_SERVICES, "name": "Vendas", "type": "credit", "parent_id": root}))
            .await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["details"], json!({"field": "type", "reason": "type_mismatch"}));
}

#[tokio::test]
async fn the_parent_and_the_company_must_be_of_the_callers_workspace() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let acme_root =
        id(&create(&h, &token, json!({"company_id": ACME_COMPANY, "name": "Despesas", "type": "debit"})).await);
    let beta_root = id(&create(
        &h,
        &h.api_token(DEMO_BETA_OWNER),
        json!({"company_id": BETA_COMPANY, "name": "Despesas", "type": "debit"}),
    )
    .await);
    // Same workspace, other company.
    let reply =
        post(&h, &token, json!({"company_id": ACME_SERVICES, "name": "X", "type": "debit", "parent_id": acme_root}))
            .await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["details"], json!({"field": "parent_id", "reason": "company_mismatch"}));
    // Another workspace's parent or company behaves exactly like a missing one.
    for (body, field) in [
        (json!({"company_id": ACME_SERVICES, "name": "X", "type": "debit", "parent_id": beta_root}), "parent_id"),
        (json!({"company_id": ACME_SERVICES, "name": "X", "type": "debit", "parent_id": MISSING}), "parent_id"),
        (json!({"company_id": BETA_COMPANY, "name": "X", "type": "debit"}), "company_id"),
        (json!({"company_id": MISSING, "name": "X", "type": "debit"}), "company_id"),
    ] {
        let reply = post(&h, &token, body.clone()).await;
        assert_eq!(reply.status, 422, "{body}");
        assert_eq!(reply.json()["error"]["details"], json!({"field": field, "reason": "invalid_reference"}), "{body}");
        assert!(!reply.json()["error"]["message"].as_str().unwrap().contains(MISSING));
    }
}

#[tokio::test]
async fn patch_changes_name_and_type_only_and_never_reparents() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let (root, child, _) = tree(&h, &token, "debit").await;
    let other = id(&create(&h, &token, json!({"company_id": ACME_SERVICES, "name": "Outra", "type": "debit"})).await);
    let path = format!("/v1/categories/{child}");
    let finance = h.api_token(DEMO_FINANCE);
    let renamed = h
        .send(
            rest(
                Method::PATCH,
                &format!("{path}?workspace_id={DEMO_WORKSPACE_ACME}"),
                &finance,
                Some(json!({"name": "Folha"})),
            )
            .build(),
        )
        .await;
    assert_eq!(renamed.status, 200, "{}", String::from_utf8_lossy(&renamed.bytes));
    let renamed = renamed.json();
    assert_eq!(renamed["name"], "Folha");
    assert_eq!(renamed["parent_id"], root);
    assert_eq!(renamed["type"], "debit");
    assert_eq!(renamed["updated_by"], DEMO_FINANCE);
    assert_eq!(renamed["created_by"], DEMO_OWNER);
    assert_eq!(renamed["updated_via"], "api");
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'categories.update'", &child)
            .await,
        1
    );
    // The answer's parent, company and level, sent back, are dropped: never written.
    for body in [json!({"parent_id": other}), json!({"company_id": ACME_COMPANY}), json!({"level": 1})] {
        let reply = h.send(rest(Method::PATCH, &path, &token, Some(body.clone())).build()).await;
        assert_eq!(reply.status, 200, "{body}");
        let kept = reply.json();
        assert_eq!((kept["parent_id"].as_str(), kept["level"].as_i64()), (Some(root.as_str()), Some(2)), "{body}");
    }
    let reply = h.send(rest(Method::PATCH, &path, &token, Some(json!({"parent": other}))).build()).await;
    assert_eq!(reply.json()["error"]["details"], json!({"field": "parent", "reason": "unknown_field"}));
    for body in [json!({"name": null}), json!({"type": null})] {
        let reply = h.send(rest(Method::PATCH, &path, &token, Some(body.clone())).build()).await;
        assert_eq!(reply.status, 422, "{body}");
        assert_eq!(reply.json()["error"]["details"]["reason"], "wrong_type", "{body}");
    }
    let blank = h.send(rest(Method::PATCH, &path, &token, Some(json!({"name": " "}))).build()).await;
    assert_eq!(blank.status, 422);
    assert_eq!(blank.json()["error"]["details"]["field"], "name");
    let got = h.send(rest(Method::GET, &path, &token, None).build()).await.json();
    assert_eq!((got["name"].as_str(), got["parent_id"].as_str()), (Some("Folha"), Some(root.as_str())));
}

#[tokio::test]
async fn a_type_change_cascades_to_every_descendant() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let (root, child, grandchild) = tree(&h, &token, "debit").await;
    let sibling = id(&create(
        &h,
        &token,
        json!({"company_id": ACME_SERVICES, "name": "Aluguel", "type": "debit", "parent_id": root}),
    )
    .await);
    let unrelated =
        id(&create(&h, &token, json!({"company_id": ACME_SERVICES, "name": "Impostos", "type": "debit"})).await);
    let reply = patch(&h, &token, &root, json!({"type": "credit"})).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(reply.json()["type"], "credit");
    for cid in [&root, &child, &grandchild, &sibling] {
        let got = get(&h, &token, cid).await;
        assert_eq!(got["type"], "credit", "{cid}");
        assert_eq!(
            count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'categories.update'", cid)
                .await,
            1,
            "{cid}"
        );
    }
    let untouched = get(&h, &token, &unrelated).await;
    assert_eq!(untouched["type"], "debit");
    // A new child follows the new type.
    let reply =
        post(&h, &token, json!({"company_id": ACME_SERVICES, "name": "X", "type": "debit", "parent_id": child})).await;
    assert_eq!(reply.json()["error"]["details"]["reason"], "type_mismatch");
}

#[tokio::test]
async fn a_child_cannot_change_to_a_type_other_than_its_parents() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let (_, child, grandchild) = tree(&h, &token, "debit").await;
    let reply = h
        .send(
            rest(
                Method::PATCH,
                &format!("/v1/categories/{child}"),
                &token,
                Some(json!({"name": "Novo", "type": "credit"})),
            )
            .build(),
        )
        .await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["details"], json!({"field": "type", "reason": "type_mismatch"}));
    // All or nothing: the name sent along did not change either.
    for cid in [&child, &grandchild] {
        let got = get(&h, &token, cid).await;
        assert_eq!(got["type"], "debit");
        assert_ne!(got["name"], "Novo");
    }
    // Sending the type it already has is fine.
    let same = patch(&h, &token, &child, json!({"type": "debit"})).await;
    assert_eq!(same.status, 200);
}

#[tokio::test]
async fn a_type_change_is_refused_while_records_of_the_tree_use_it() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let (root, child, grandchild) = tree(&h, &token, "debit").await;
    use_category(&h, &grandchild).await;
    let reply = patch(&h, &token, &root, json!({"type": "credit"})).await;
    assert_eq!(reply.status, 422, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(
        reply.json()["error"]["details"],
        json!({"reason": "in_use", "usage": {"transactions": 1, "payables": 1, "receivables": 1}})
    );
    for cid in [&root, &child, &grandchild] {
        let got = get(&h, &token, cid).await;
        assert_eq!(got["type"], "debit");
    }
    // Renaming stays possible.
    let renamed = patch(&h, &token, &root, json!({"name": "Custos"})).await;
    assert_eq!(renamed.status, 200);
}

#[tokio::test]
async fn delete_of_a_category_with_children_is_has_children() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let (root, child, grandchild) = tree(&h, &token, "debit").await;
    for cid in [&root, &child] {
        let reply = h.send(rest(Method::DELETE, &format!("/v1/categories/{cid}"), &token, None).build()).await;
        assert_eq!(reply.status, 422);
        assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
        assert_eq!(reply.json()["error"]["details"]["reason"], "has_children");
    }
    // Leaves first, then up the tree.
    for cid in [&grandchild, &child, &root] {
        assert_eq!(
            h.send(rest(Method::DELETE, &format!("/v1/categories/{cid}"), &token, None).build()).await.status,
            204
        );
    }
}

#[tokio::test]
async fn delete_of_a_category_records_use_is_in_use_with_the_usage() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let leaf = id(&create(&h, &token, json!({"company_id": ACME_SERVICES, "name": "Folha", "type": "debit"})).await);
    use_category(&h, &leaf).await;
    let reply = h.send(rest(Method::DELETE, &format!("/v1/categories/{leaf}"), &token, None).build()).await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
    assert_eq!(
        reply.json()["error"]["details"],
        json!({"reason": "in_use", "usage": {"transactions": 1, "payables": 1, "receivables": 1}})
    );
    // Not silently detached: the records keep their category.
    assert_eq!(count(&h, "SELECT COUNT(*) FROM billings WHERE category_id = $1", &leaf).await, 2);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE category_id = $1", &leaf).await, 1);
    assert_eq!(h.send(rest(Method::GET, &format!("/v1/categories/{leaf}"), &token, None).build()).await.status, 200);
}

#[tokio::test]
async fn list_filters_sorts_and_pages() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let (root, child, grandchild) = tree(&h, &token, "debit").await;
    let income =
        id(&create(&h, &token, json!({"company_id": ACME_SERVICES, "name": "Varejo", "type": "credit"})).await);
    let other_company =
        id(&create(&h, &token, json!({"company_id": ACME_COMPANY, "name": "Zeladoria", "type": "debit"})).await);
    let ids = |page: &Value| -> Vec<String> {
        page["data"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).collect()
    };
    let get =
        |q: String| rest(Method::GET, &format!("/v1/categories?company_id={ACME_SERVICES}&{q}"), &token, None).build();
    let by = |q: &str| {
        let request = get(q.to_string());
        let h = &h;
        async move {
            let reply = h.send(request).await;
            assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
            reply.json()
        }
    };
    // Default sort: name.
    assert_eq!(ids(&by("").await), vec![root.clone(), child.clone(), grandchild.clone(), income.clone()]);
    assert_eq!(ids(&by(&format!("parent_id={root}")).await), vec![child.clone()]);
    assert_eq!(ids(&by("type[in]=credit").await), vec![income.clone()]);
    assert_eq!(ids(&by("level=1").await), vec![root.clone(), income.clone()]);
    assert_eq!(ids(&by("level[gte]=2").await), vec![child.clone(), grandchild.clone()]);
    assert_eq!(ids(&by("level[lte]=2&type=debit").await), vec![root.clone(), child.clone()]);
    assert_eq!(ids(&by("name[in]=Varejo,Pessoal").await), vec![child.clone(), income.clone()]);
    assert_eq!(ids(&by("sort=-level").await)[0], grandchild);
    let all = h
        .send(
            rest(
                Method::GET,
                &format!("/v1/categories?company_id[in]={ACME_SERVICES},{ACME_COMPANY}&name[in]=Zeladoria,Varejo"),
                &token,
                None,
            )
            .build(),
        )
        .await
        .json();
    assert_eq!(ids(&all), vec![income.clone(), other_company.clone()]);
    // Pagination by level, two at a time: every row once, in order.
    let mut seen = Vec::new();
    let mut cursor = String::new();
    for round in 0.. {
        assert!(round < 5);
        let page = by(&format!("sort=level&limit=2{cursor}")).await;
        seen.extend(ids(&page));
        match page["meta"]["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => break,
        }
    }
    let mut expected_roots = vec![root.clone(), income.clone()];
    expected_roots.sort();
    assert_eq!(
        seen[..2].iter().cloned().collect::<std::collections::BTreeSet<_>>(),
        expected_roots.into_iter().collect()
    );
    assert_eq!(seen[2..], [child, grandchild]);
    for bad in [
        "colour=red",
        "type=cost",
        "level=one",
        "parent_id=nope",
        "type[gte]=debit",
        "sort=updated_at",
        "limit=0",
        "cursor=nope",
        "name[between]=a",
    ] {
        let reply = h.send(get(bad.to_string())).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
    }
}

#[tokio::test]
async fn children_created_during_a_type_change_end_up_with_the_tree_type() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let (root, child, _) = tree(&h, &token, "debit").await;
    let new_child = |n: usize| {
        rest(
            Method::POST,
            "/v1/categories",
            &token,
            Some(
                json!({"company_id": ACME_SERVICES, "name": format!("Filho {n}"), "type": "debit", "parent_id": child}),
            ),
        )
        .build()
    };
    let flip = rest(Method::PATCH, &format!("/v1/categories/{root}"), &token, Some(json!({"type": "credit"}))).build();
    let (a, b, c, d) = tokio::join!(h.send(new_child(1)), h.send(flip), h.send(new_child(2)), h.send(new_child(3)));
    for reply in [&a, &b, &c, &d] {
        // 201/200, 422 type_mismatch (the child came after the flip), or 503 when SQLite is busy.
        assert!([200, 201, 422, 503].contains(&reply.status.as_u16()), "{}", String::from_utf8_lossy(&reply.bytes));
    }
    let root_type: String = sql::query("SELECT category_type FROM categories WHERE id = $1")
        .bind(&root)
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    let mixed = count(
        &h,
        "SELECT COUNT(*) FROM categories WHERE (parent_id = $1 OR parent_id IN (SELECT id FROM categories WHERE parent_id = $1))
            AND category_type <> (SELECT category_type FROM categories WHERE id = $1)",
        &root,
    )
    .await;
    assert_eq!(mixed, 0, "every descendant has the root's type ({root_type})");
}

#[tokio::test]
async fn openapi_names_the_category_types_and_what_an_update_changes() {
    let h = Harness::new().await;
    let doc = crate::records::openapi(&h).await;
    let create = crate::records::request_schema(&doc, "/v1/categories", "post");
    assert_eq!(create["properties"]["type"]["enum"], json!(["debit", "credit"]));
    let update = &crate::records::request_schema(&doc, "/v1/categories/{id}", "patch")["properties"];
    assert_eq!(update.as_object().unwrap().keys().collect::<Vec<_>>(), vec!["name", "type"]);
}
