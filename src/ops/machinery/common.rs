//! Small pieces every operation uses: error shapes, id and date checks, the audit
//! record of a write.

use crate::storage::Conn;
use serde_json::{json, Value};

use super::refs::Polarity;
use crate::error::{ApiError, ErrorCode};
use crate::ops::OpContext;
use crate::storage::audit::{self, AuditEvent};
use crate::storage::db_error;
use crate::storage::identity::Membership;

/// 422 `unprocessable_entity` with `details {field, reason}`.
pub fn unprocessable(field: &str, reason: &str, message: &str) -> ApiError {
    ApiError::new(ErrorCode::UnprocessableEntity, message).with_details(json!({ "field": field, "reason": reason }))
}

/// 400 `bad_request` with `details {field, reason}`: a request the door cannot read as
/// asked (a query parameter, a multipart part, two fields that exclude each other).
pub fn invalid(field: &str, reason: &str, message: &str) -> ApiError {
    ApiError::bad_request(message).with_details(json!({ "field": field, "reason": reason }))
}

/// A text a record cannot do without (a name, a description): trimmed, and a blank one
/// (empty or only spaces) is 422 `too_short` naming `field`.
pub fn required<'a>(field: &str, value: &'a str) -> Result<&'a str, ApiError> {
    match value.trim() {
        "" => Err(unprocessable(field, "too_short", &format!("{field} must not be blank"))),
        text => Ok(text),
    }
}

/// An optional text: trimmed, and a blank one is none.
pub fn optional(value: Option<&str>) -> Option<String> {
    value.map(str::trim).filter(|v| !v.is_empty()).map(str::to_string)
}

/// As [`required`], for a field an update may leave out.
pub fn required_if_sent<'a>(field: &str, value: Option<&'a str>) -> Result<Option<&'a str>, ApiError> {
    value.map(|value| required(field, value)).transpose()
}

/// A path id: a malformed one names nothing, exactly like an unknown one (404).
pub fn path_id(id: &str, what: &str) -> Result<String, ApiError> {
    uuid::Uuid::parse_str(id).map(|u| u.to_string()).map_err(|_| ApiError::not_found(what))
}

/// A referenced id in a body: malformed is a 422 naming the field.
pub fn body_id(field: &str, id: &str) -> Result<String, ApiError> {
    uuid::Uuid::parse_str(id)
        .map(|u| u.to_string())
        .map_err(|_| unprocessable(field, "invalid_uuid", &format!("{field} must be a UUID")))
}

/// Maps a unique-constraint violation to 409 `conflict` naming `field`.
pub fn conflict_on_unique(err: crate::storage::Error, field: &str, message: &str) -> ApiError {
    match &err {
        db if db.is_unique_violation() => {
            ApiError::new(ErrorCode::Conflict, message).with_details(json!({ "field": field, "reason": "duplicate" }))
        }
        _ => db_error(err),
    }
}

/// Appends the audit event of a successful write, in the write's transaction.
pub async fn audit_write(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    action: &str,
    target_type: &str,
    target_id: &str,
) -> Result<(), ApiError> {
    audit_write_with(ctx, conn, ws, (action, target_type, target_id), None).await
}

/// As [`audit_write`], with details of what was done.
pub async fn audit_write_with(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    (action, target_type, target_id): (&str, &str, &str),
    details: Option<Value>,
) -> Result<(), ApiError> {
    audit::append(
        &mut *conn,
        ctx.channel,
        &AuditEvent {
            workspace_id: Some(&ws.workspace_id),
            user_id: Some(&ctx.identity.user_id),
            action,
            target_type: Some(target_type),
            target_id: Some(target_id),
            outcome: "ok",
            details: details.map(|d| d.to_string()),
            client_id: ctx.identity.client_id.as_deref(),
        },
    )
    .await
    .map_err(ApiError::from)
}

/// A decimal amount ("4500.00") as the user reads it ("R$ 4.500,00").
pub fn brl(amount: &str) -> String {
    match crate::domain::money::Cents::parse(amount, true) {
        Ok(cents) => cents.brl(),
        Err(_) => format!("R$ {amount}"),
    }
}

/// A bill in the user's terms, for a confirmation: “description” to (a payable's vendor)
/// or from (a receivable's customer) “person” (R$ amount, due date), the texts quoted
/// safely. Every question that names a bill names it so.
pub fn bill_label(
    polarity: Polarity,
    description: &str,
    person: Option<&str>,
    amount: crate::domain::money::Cents,
    due: crate::domain::dates::Date,
) -> String {
    use crate::domain::text::quoted;
    let counterparty = match polarity {
        Polarity::Debit => "to",
        Polarity::Credit => "from",
    };
    let person = person.map(|name| format!(" {counterparty} {}", quoted(name))).unwrap_or_default();
    format!("{}{person} ({}, due {due})", quoted(description), amount.brl())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule of every name and description: trimmed, and blank refused naming the
    /// field, on create (`required`) and on an update that sends it (`required_if_sent`).
    #[test]
    fn a_required_text_is_trimmed_and_never_blank() {
        assert_eq!(required("name", "  Acme Ltda ").unwrap(), "Acme Ltda");
        for blank in ["", " ", "\t\n "] {
            let err = required("name", blank).unwrap_err();
            assert_eq!(
                (err.status().as_u16(), err.code, err.message.as_str()),
                (422, ErrorCode::UnprocessableEntity, "name must not be blank")
            );
            assert_eq!(err.details, Some(json!({"field": "name", "reason": "too_short"})));
        }
        let err = required("description", " ").unwrap_err();
        assert_eq!(err.message, "description must not be blank");
        assert_eq!(err.details.unwrap()["field"], "description");
        assert_eq!(required_if_sent("name", None).unwrap(), None);
        assert_eq!(required_if_sent("name", Some(" x ")).unwrap(), Some("x"));
        assert!(required_if_sent("name", Some(" ")).is_err());
        assert_eq!(optional(Some("  note ")), Some("note".to_string()));
        assert_eq!((optional(Some(" \t")), optional(None)), (None, None));
    }
}
