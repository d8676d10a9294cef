//! One simulated agent of the load run: it reads, creates, settles and replays as
//! its plan says, and records what it saw in its ledger and tally.

use super::*;

#[allow(clippy::too_many_arguments)]
pub(super) async fn client(
    plan: Arc<Plan>,
    index: usize,
    tools: Arc<Vec<String>>,
    ledger: Arc<Mutex<Ledger>>,
    tally: Arc<Mutex<Tally>>,
    run_started: Instant,
    end: Arc<End>,
) {
    let outage = plan.outage.is_some();
    let mut conn = Conn::new(plan.addr);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let total: u32 = Kind::MIX.iter().map(|(_, w)| w).sum();
    let mut local = Tally::default();
    let mut sequence = 0u64;
    while !end.reached() {
        sequence += 1;
        let mut pick = rng.below(u64::from(total)) as u32;
        let kind = Kind::MIX
            .iter()
            .find(|(_, w)| {
                if pick < *w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .map(|(k, _)| *k)
            .unwrap_or(Kind::RestList);
        let api = plan.api_token.as_str();
        let started = Instant::now();
        let (answer, note) = match kind {
            Kind::RestList => {
                let path = [
                    "/v1/payables?limit=25&sort=-due_date",
                    "/v1/receivables?limit=25",
                    "/v1/financial-transactions?limit=25",
                    "/v1/people?limit=25",
                ][rng.below(4) as usize];
                (conn.send("GET", path, api, &[], "").await, None)
            }
            Kind::RestGet => {
                let path = [
                    format!("/v1/payables/{ACME_RENT_DECEMBER}"),
                    format!("/v1/financial-accounts/{ACME_CHECKING_ACCOUNT}"),
                    format!("/v1/companies/{ACME_COMPANY}"),
                ][rng.below(3) as usize]
                    .clone();
                (conn.send("GET", &path, api, &[], "").await, None)
            }
            Kind::RestAggregates => {
                let path = [
                    "/v1/payables/aggregates",
                    "/v1/receivables/aggregates?company_id=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11",
                    "/v1/financial-transactions/aggregates",
                ][rng.below(3) as usize];
                (conn.send("GET", path, api, &[], "").await, None)
            }
            Kind::McpToolsList => (
                conn.send(
                    "POST",
                    "/",
                    &plan.mcp_token,
                    &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")],
                    &mcp_body("tools/list", json!({})),
                )
                .await,
                None,
            ),
            Kind::McpToolsCall => {
                let name = tools[rng.below(tools.len() as u64) as usize].clone();
                let arguments = if name == "finance_workspaces_list" { json!({}) } else { json!({"limit": 5}) };
                let body = mcp_body("tools/call", json!({"name": name, "arguments": arguments}));
                (
                    conn.send(
                        "POST",
                        "/",
                        &plan.mcp_token,
                        &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", &name)],
                        &body,
                    )
                    .await,
                    None,
                )
            }
            Kind::CreatePayable => {
                let cents = 100 + rng.below(99_900) as i64;
                let key = format!("load-{index}-{sequence}");
                let body = json!({"company_id": ACME_COMPANY, "description": format!("Carga {index}-{sequence}"), "amount": format!("{}.{:02}", cents / 100, cents % 100),
                                  "due_date": "2026-12-28", "person_name": "Fornecedor de carga"})
                .to_string();
                let answer = conn.send("POST", "/v1/payables", api, &[("X-Idempotency-Key", &key)], &body).await;
                // One create in eight is sent again with the same key: it must replay.
                let replay = if rng.below(8) == 0 {
                    Some(conn.send("POST", "/v1/payables", api, &[("X-Idempotency-Key", &key)], &body).await)
                } else {
                    None
                };
                let replay = replay.filter(|again| !(outage && again.as_ref().is_ok_and(|a| a.status == 503)));
                if outage && answer.as_ref().is_ok_and(|a| a.status == 503) {
                    local.unresolved.push(Unresolved { kind, key: key.clone(), body: body.clone(), transfer: None });
                }
                if let Ok(first) = &answer {
                    if first.status == 201 {
                        let id = first.json()["id"].as_str().unwrap_or_default().to_string();
                        if let Some(Ok(again)) = &replay {
                            local.replays_checked += 1;
                            if again.status != 201
                                || again.json()["id"].as_str() != Some(id.as_str())
                                || !again.head.to_ascii_lowercase().contains("x-idempotency-replayed: true")
                            {
                                local.server_errors.push(format!(
                                    "replay of {key} answered {} {}",
                                    again.status,
                                    String::from_utf8_lossy(&again.body)
                                ));
                            }
                        }
                        let mut ledger = ledger.lock().unwrap();
                        ledger.created.insert(id.clone());
                        ledger.pending.push((id, cents));
                    }
                }
                (answer, None)
            }
            Kind::Settle => {
                // Clients pick from the shared pool, so settles of one payable race.
                let target = {
                    let ledger = ledger.lock().unwrap();
                    let n = ledger.pending.len();
                    (n > 0).then(|| ledger.pending[n - 1 - rng.below(n.min(16) as u64) as usize].clone())
                };
                match target {
                    None => continue,
                    Some((id, cents)) => {
                        let body = json!({"payment_date": "2026-11-30", "financial_account_id": ACME_CHECKING_ACCOUNT})
                            .to_string();
                        let answer = conn.send("POST", &format!("/v1/payables/{id}/settle"), api, &[], &body).await;
                        (answer, Some((id, cents)))
                    }
                }
            }
            Kind::Transfer => {
                let cents = 1 + rng.below(999) as i64;
                let (from, to) = if rng.below(2) == 0 {
                    (ACME_CHECKING_ACCOUNT, ACME_CASH_ACCOUNT)
                } else {
                    (ACME_CASH_ACCOUNT, ACME_CHECKING_ACCOUNT)
                };
                let key = format!("load-transfer-{index}-{sequence}");
                let body = json!({"from_account_id": from, "to_account_id": to, "amount": format!("{}.{:02}", cents / 100, cents % 100),
                                  "occurred_at": "2026-11-30", "description": "Transferência de carga"})
                .to_string();
                let answer = conn.send("POST", "/v1/transfers", api, &[("X-Idempotency-Key", &key)], &body).await;
                if outage && answer.as_ref().is_ok_and(|a| a.status == 503) {
                    local.unresolved.push(Unresolved {
                        kind,
                        key: key.clone(),
                        body: body.clone(),
                        transfer: Some((from.to_string(), to.to_string(), cents)),
                    });
                }
                if let Ok(done) = &answer {
                    if done.status == 201 {
                        let id = done.json()["transfer_id"].as_str().unwrap_or_default().to_string();
                        ledger.lock().unwrap().transfers.insert(id, (from.to_string(), to.to_string(), cents));
                    }
                }
                (answer, None)
            }
        };
        let elapsed = started.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
        match answer {
            Err(e) => local.transport_errors.push(format!("{}: {e}", kind.name())),
            Ok(answer) => {
                local.latencies.entry(kind).or_default().push(elapsed);
                *local.statuses.entry((kind, answer.status)).or_default() += 1;
                let retry_after = answer.head.lines().any(|l| l.to_ascii_lowercase().starts_with("retry-after:"));
                // In an outage run a 503 with Retry-After is judged by when it came (see
                // outage::judge); every other 5xx is an error.
                let tolerated = outage && answer.status == 503 && retry_after;
                if answer.status >= 500 && !tolerated {
                    local.server_errors.push(format!(
                        "{} → {} {}",
                        kind.name(),
                        answer.status,
                        String::from_utf8_lossy(&answer.body)
                    ));
                }
                if outage {
                    let at = run_started.elapsed().as_millis().min(u128::from(u32::MAX)) as u32;
                    local.timeline.push((at, answer.status, retry_after));
                    if answer.status == 503 {
                        if let Some(settle) = note.clone() {
                            local.ambiguous_settles.push(settle);
                        }
                        // A client backs off a little after a 503.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                if let (Some((id, cents)), 200) = (note, answer.status) {
                    let mut ledger = ledger.lock().unwrap();
                    if ledger.settled.insert(id.clone(), cents).is_some() {
                        local.server_errors.push(format!("payable {id} settled twice"));
                    }
                    ledger.pending.retain(|(p, _)| *p != id);
                }
            }
        }
    }
    let mut tally = tally.lock().unwrap();
    for (kind, mut l) in local.latencies {
        tally.latencies.entry(kind).or_default().append(&mut l);
    }
    for (key, n) in local.statuses {
        *tally.statuses.entry(key).or_default() += n;
    }
    tally.transport_errors.extend(local.transport_errors);
    tally.server_errors.extend(local.server_errors);
    tally.replays_checked += local.replays_checked;
    tally.timeline.extend(local.timeline);
    tally.unresolved.extend(local.unresolved);
    tally.ambiguous_settles.extend(local.ambiguous_settles);
}
