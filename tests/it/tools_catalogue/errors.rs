//! Error results any client can show (SPEC §5): an `isError` result carries the REST
//! envelope as its text content only. A tool's `outputSchema` describes its success and a
//! client validates `structuredContent` against it, so an envelope there would be shown
//! as the client's own schema failure instead of the server's message. Checked for a bad
//! argument, an id that names nothing and a refused confirmation, in every era, at the
//! full catalogue (`/`, `/mcp`) and through find mode's runners (`/mcp/find`).

use super::*;

const ERAS: [&str; 3] = ["2026-07-28", "2025-06-18", "2025-03-26"];

#[derive(Clone, Copy, Debug)]
enum Door {
    Root,
    Alias,
    Find,
}

const DOORS: [Door; 3] = [Door::Root, Door::Alias, Door::Find];

/// A call of `tool` in `era` at `door` (2026: from a client that declares form
/// elicitation, with `extra` params such as `requestState` and `inputResponses`).
fn call_at(era: &str, door: Door, tool: &str, arguments: Value, extra: Value) -> Mcp {
    let request = if era == "2026-07-28" { confirmable(tool, arguments, extra) } else { legacy(tool, arguments, era) };
    match door {
        Door::Root => request,
        Door::Alias => request.path("/mcp"),
        Door::Find => through_runner(request),
    }
}

async fn result_of(h: &Harness, token: &str, request: Mcp) -> Value {
    let reply = h.send(request.bearer(token).build()).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    reply.result()
}

#[tokio::test]
async fn error_results_carry_the_envelope_as_text_only_in_every_era_and_door() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_OWNER);
    for era in ERAS {
        for door in DOORS {
            let at = format!("{era} {door:?}");
            // A bad argument: the message names the bounds.
            let request = call_at(era, door, "finance_payables_list", json!({"limit": 100000}), json!({}));
            let error = tool_error(&result_of(&h, &token, request).await);
            assert_eq!(error["details"]["field"], "limit", "{at}: {error}");
            let message = error["message"].as_str().unwrap();
            assert!(message.contains("between 1 and 100"), "{at}: {message}");

            // An id that names nothing.
            let missing = json!({"id": "b1110000-0001-4000-8000-0000000000ff"});
            let request = call_at(era, door, "finance_payables_get", missing, json!({}));
            let error = tool_error(&result_of(&h, &token, request).await);
            assert_eq!(error["code"], "not_found", "{at}: {error}");

            // A refused confirmation: declined on 2026, impossible to ask on 2025.
            let args = json!({"id": ACME_SUPPLIES_PENDING});
            let first = result_of(&h, &token, call_at(era, door, "finance_payables_delete", args.clone(), json!({})));
            let refused = if era == "2026-07-28" {
                let first = first.await;
                assert_eq!(first["resultType"], "input_required", "{at}: {first}");
                let declined = json!({
                    "requestState": first["requestState"],
                    "inputResponses": {"confirm": {"action": "decline"}},
                });
                result_of(&h, &token, call_at(era, door, "finance_payables_delete", args, declined)).await
            } else {
                first.await
            };
            let error = tool_error(&refused);
            let message = error["message"].as_str().unwrap();
            let expected = if era == "2026-07-28" { "nothing changed" } else { "2026-07-28" };
            assert!(message.contains(expected), "{at}: {message}");
        }
    }
    let still = h.send(call("finance_payables_get", json!({"id": ACME_SUPPLIES_PENDING})).bearer(&token).build()).await;
    assert_eq!(still.result()["structuredContent"]["status"], "pending", "nothing was deleted");
}
