//! Confirmation of destructive tools (SPEC §5.2), by multi round-trip requests.
//!
//! A destructive tool never runs on the first call. On protocol 2026-07-28 with form
//! elicitation, the first call answers `input_required` with a form asking the user to
//! confirm — the question says what will happen, in the user's terms, built from the
//! records as they are (`ops::resource::Question`) — and a `requestState`: an
//! HMAC-signed token, valid 5 minutes, bound to the user, the workspace, the tool, a
//! digest of the arguments, the question's digest (what it showed and every value the
//! operation depends on) and a nonce. The retry that carries that state and an accepting
//! answer runs the tool — exactly as asked and exactly once: in one transaction whose
//! reads all see one moment of the database, the nonce is claimed (a replay answers the
//! first outcome), the question is built again from the records as they are now, and
//! only if its digest is the one the user answered does the operation run; anything
//! changed in between is asked again, nothing done. Without form elicitation the call is
//! refused (-32021); on the 2025 era, which cannot ask, it is an `isError` result and
//! nothing changes.

use aws_lc_rs::{digest, hmac};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::catalogue::split;
use super::tools::{outcome_result, tool_result, ToolCall, ToolSpec};
use super::unavailable;
use crate::error::{ApiError, ErrorCode};
use crate::ops::machinery::resource::Question;
use crate::ops::Channel;
use crate::protocol::rpc::RpcError;
use crate::storage::audit::{self, AuditEvent};
use crate::storage::{confirmations, db_error};

/// How long a confirmation request stays valid.
pub const STATE_TTL_SECONDS: i64 = 300;

/// What a `requestState` binds: user, workspace, tool, arguments digest, the question's
/// digest (`ops::resource::Question::digest`), nonce and expiry (Unix seconds). Short
/// field names keep the token small.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct State {
    pub u: String,
    pub w: String,
    pub t: String,
    pub d: String,
    pub q: String,
    pub n: String,
    pub e: i64,
}

/// How many times a confirmed action is run again when its transaction met a
/// concurrent change (PostgreSQL's serialization failure): each run sees the change, so
/// it asks again or answers the replay.
const RUNS: usize = 3;

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
}

/// Signs `state` as a `requestState` token: base64url(JSON) "." base64url(HMAC-SHA256).
pub fn sign(key: &[u8], state: &State) -> String {
    let payload = serde_json::to_vec(state).unwrap_or_default();
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), &payload);
    format!("{}.{}", b64().encode(&payload), b64().encode(tag.as_ref()))
}

/// The state a `requestState` token carries, if `key` signed it (expiry and bindings
/// are the caller's to check).
pub fn verify(key: &[u8], token: &str) -> Option<State> {
    let (payload, tag) = token.split_once('.')?;
    let payload = b64().decode(payload).ok()?;
    let tag = b64().decode(tag).ok()?;
    hmac::verify(&hmac::Key::new(hmac::HMAC_SHA256, key), &payload, &tag).ok()?;
    serde_json::from_slice(&payload).ok()
}

/// A digest of the arguments (object keys are sorted, so equal arguments digest equally).
fn arguments_digest(arguments: &Map<String, Value>) -> String {
    let bytes = Value::Object(arguments.clone()).to_string();
    digest::digest(&digest::SHA256, bytes.as_bytes()).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

async fn record(call: &ToolCall<'_>, workspace_id: Option<&str>, tool: &ToolSpec, outcome: &str) {
    let event = AuditEvent {
        workspace_id,
        user_id: Some(&call.ctx.identity.user_id),
        action: "tools.confirmation",
        target_type: Some("tool"),
        target_id: Some(tool.name),
        outcome,
        details: None,
        client_id: call.ctx.identity.client_id.as_deref(),
    };
    if let Err(e) = audit::record(&call.ctx.state.db, Channel::Mcp, &event).await {
        tracing::warn!(error = %e, "could not record a confirmation outcome");
    }
}

fn not_confirmed(message: &str, reason: &str) -> Map<String, Value> {
    let error = ApiError::new(ErrorCode::Forbidden, message).with_details(json!({ "reason": reason }));
    tool_result(&error.envelope(), true)
}

/// Whether this request's client declared form elicitation (`{}` means form).
fn has_form_elicitation(call: &ToolCall<'_>) -> bool {
    match call.ctx.era {
        crate::protocol::era::Era::Modern { client_capabilities } => match client_capabilities.get("elicitation") {
            Some(Value::Object(e)) => e.is_empty() || e.contains_key("form"),
            _ => false,
        },
        _ => false,
    }
}

/// Runs a destructive tool through the confirmation flow.
pub async fn run_confirmed(
    call: &ToolCall<'_>,
    tool: &ToolSpec,
    params: &Map<String, Value>,
) -> Result<Map<String, Value>, RpcError> {
    if !call.ctx.era.is_modern() {
        record(call, None, tool, "refused_legacy_era").await;
        return Ok(not_confirmed(
            "This action needs the user's confirmation, which requires a client on protocol 2026-07-28 with form \
             elicitation (or the Kobana Finance dashboard). Nothing changed.",
            "confirmation_unavailable",
        ));
    }
    if !has_form_elicitation(call) {
        return Err(RpcError::missing_capability(
            "This tool asks the user to confirm through form elicitation, which the client did not declare",
            json!({ "elicitation": {} }),
        ));
    }
    let ctx = match call.ctx.op_context().await {
        Ok(ctx) => ctx,
        Err(e) => return outcome_result(Err(e)),
    };
    let args = split(call.arguments);
    let ws = match ctx.workspace(args.workspace_id.as_deref(), call.ctx.default_workspace.as_deref()) {
        Ok(ws) => ws,
        Err(e) => return outcome_result(Err(e)),
    };
    let keys = call.ctx.state.keys.current().await.map_err(|e| unavailable(&e))?;
    let asking = Asking {
        call,
        tool,
        workspace_id: &ws.workspace_id,
        key: &keys.state,
        digest: arguments_digest(call.arguments),
    };
    let now = crate::clock::now_unix();
    if let Some(token) = params.get("requestState") {
        let state = token
            .as_str()
            .and_then(|t| verify(&keys.state, t))
            .filter(|s| {
                s.u == call.ctx.identity.user_id
                    && s.w == ws.workspace_id
                    && s.t == tool.name
                    && s.d == asking.digest
                    && s.e >= now
            })
            .ok_or_else(|| RpcError::invalid_params("Invalid or expired requestState"))?;
        if let Some(answer) = params.get("inputResponses").and_then(|r| r.get("confirm")) {
            let accepted = answer.get("action").and_then(Value::as_str) == Some("accept")
                && answer.get("content").and_then(|c| c.get("confirm")) == Some(&Value::Bool(true));
            if !accepted {
                record(call, Some(&ws.workspace_id), tool, "declined").await;
                return Ok(not_confirmed("The user did not confirm; nothing changed.", "not_confirmed"));
            }
            return execute_once(&asking, &state).await;
        }
    }
    // First call (or a retry without an answer): ask.
    let question = {
        let mut conn = call.ctx.state.db.acquire().await.map_err(|e| unavailable(&db_error(e)))?;
        match asking.question(&mut conn).await {
            Ok(question) => question,
            Err(e) => return outcome_result(Err(e)),
        }
    };
    record(call, Some(&ws.workspace_id), tool, "requested").await;
    Ok(asking.ask(&question))
}

/// A confirmed call, and what its questions are signed with.
struct Asking<'a> {
    call: &'a ToolCall<'a>,
    tool: &'a ToolSpec,
    workspace_id: &'a str,
    key: &'a [u8],
    /// The arguments' digest.
    digest: String,
}

impl Asking<'_> {
    /// The tool's question, built from the records as `conn` reads them.
    async fn question(&self, conn: &mut crate::storage::Conn) -> Result<Question, ApiError> {
        let describe = self.tool.describe.ok_or_else(ApiError::internal)?;
        describe(self.call, conn).await
    }

    /// The `input_required` result asking `question`, with a fresh `requestState`.
    fn ask(&self, question: &Question) -> Map<String, Value> {
        let state = State {
            u: self.call.ctx.identity.user_id.clone(),
            w: self.workspace_id.to_string(),
            t: self.tool.name.to_string(),
            d: self.digest.clone(),
            q: question.digest(),
            n: uuid::Uuid::new_v4().to_string(),
            e: crate::clock::now_unix() + STATE_TTL_SECONDS,
        };
        let mut result = Map::new();
        result.insert("resultType".into(), json!("input_required"));
        result.insert(
            "inputRequests".into(),
            json!({ "confirm": { "method": "elicitation/create", "params": {
                "mode": "form",
                "message": question.text,
                "requestedSchema": {
                    "type": "object",
                    "properties": { "confirm": { "type": "boolean", "title": "Confirm" } },
                    "required": ["confirm"],
                },
            }}}),
        );
        result.insert("requestState".into(), json!(sign(self.key, &state)));
        result
    }
}

/// What one run of a confirmed call came to.
enum Run {
    Done(Map<String, Value>),
    /// What the question read changed since the user was asked: asked again.
    Changed(Question),
    /// The run met a concurrent change: nothing of it stays.
    Again,
}

/// Runs the confirmed call once per nonce and only as asked: the nonce row and the
/// operation commit together (a replay answers the stored outcome), after the question,
/// built again in the operation's transaction, proves the same as the one the user
/// answered. A transaction that met a concurrent change runs again from the start.
async fn execute_once(asking: &Asking<'_>, state: &State) -> Result<Map<String, Value>, RpcError> {
    for _ in 0..RUNS {
        match run_once(asking, state).await? {
            Run::Done(result) => return Ok(result),
            Run::Changed(question) => {
                record(asking.call, Some(asking.workspace_id), asking.tool, "changed").await;
                return Ok(asking.ask(&question));
            }
            Run::Again => continue,
        }
    }
    Ok(tool_result(&ApiError::changed_meanwhile().envelope(), true))
}

async fn run_once(asking: &Asking<'_>, state: &State) -> Result<Run, RpcError> {
    let Asking { call, tool, workspace_id, .. } = *asking;
    let db = &call.ctx.state.db;
    let fail = |e: crate::storage::Error| unavailable(&db_error(e));
    let now = crate::clock::now_unix();
    let claim = confirmations::Nonce {
        nonce: &state.n,
        workspace_id,
        user_id: &call.ctx.identity.user_id,
        tool: tool.name,
        args_digest: &state.d,
        created_at: now,
        expires_at: now + STATE_TTL_SECONDS,
    };
    let mut tx = db.begin_consistent().await.map_err(fail)?;
    let claimed = match confirmations::claim(&mut tx, &claim, None).await {
        Err(e) if e.is_serialization_failure() => return Ok(Run::Again),
        claimed => claimed.map_err(fail)?,
    };
    if !claimed {
        let outcome = confirmations::outcome(&mut tx, &state.n).await.map_err(fail)?;
        drop(tx);
        record(call, Some(workspace_id), tool, "replayed").await;
        return Ok(Run::Done(match outcome.and_then(|o| serde_json::from_str::<Map<String, Value>>(&o).ok()) {
            Some(first) => first,
            None => tool_result(
                &ApiError::new(ErrorCode::Conflict, "This confirmation is still being carried out").envelope(),
                true,
            ),
        }));
    }
    let ran = match asking.question(&mut tx).await {
        Ok(question) if question.digest() != state.q => return Ok(Run::Changed(question)),
        Ok(_) => (tool.handler)(call, &mut tx).await.and_then(super::tools::Answer::into_value),
        Err(e) => Err(e),
    };
    match ran {
        Ok(value) => {
            let result = tool_result(&value, false);
            let stored = Value::Object(result.clone()).to_string();
            let committed = async {
                confirmations::store_outcome(&mut tx, &state.n, &stored).await?;
                tx.commit().await
            };
            match committed.await {
                Err(e) if e.is_serialization_failure() => return Ok(Run::Again),
                committed => committed.map_err(fail)?,
            }
            record(call, Some(workspace_id), tool, "executed").await;
            Ok(Run::Done(result))
        }
        Err(e) if e.code == ErrorCode::ServiceUnavailable => Err(unavailable(&e)),
        Err(e) if e.is_changed_meanwhile() => Ok(Run::Again),
        Err(e) => {
            // The operation's writes are rolled back; the refusal itself is the outcome
            // a replay will see.
            drop(tx);
            let result = tool_result(&e.envelope(), true);
            let mut tx = db.begin().await.map_err(fail)?;
            confirmations::claim(&mut tx, &claim, Some(&Value::Object(result.clone()).to_string()))
                .await
                .map_err(fail)?;
            tx.commit().await.map_err(fail)?;
            record(call, Some(workspace_id), tool, "failed").await;
            Ok(Run::Done(result))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_state_is_signed() {
        let state =
            State { u: "u".into(), w: "w".into(), t: "t".into(), d: "d".into(), q: "q".into(), n: "n".into(), e: 1 };
        let token = sign(b"key", &state);
        assert_eq!(verify(b"key", &token), Some(state));
        assert_eq!(verify(b"other", &token), None);
        let (payload, tag) = token.split_once('.').unwrap();
        let forged = b64().encode(br#"{"u":"x","w":"w","t":"t","d":"d","q":"q","n":"n","e":1}"#);
        assert_eq!(verify(b"key", &format!("{forged}.{tag}")), None);
        assert_eq!(verify(b"key", payload), None);
    }
}
