//! A payable's payment coordinates: what the bank needs to pay it — a boleto's barcode,
//! a Pix copy-and-paste code or key, a transfer's bank, branch and account, a tax
//! slip's kind and data — and to whom (`beneficiary_*`) and when (`scheduled_to`). A
//! payable's record carries them (never its list row); creates and updates write them,
//! each checked by its domain rule ([`crate::domain::coordinates`]) and kept in the
//! form the bank takes (digits, a canonical Pix key). They live beside the bill, in
//! `payment_coordinates`, one row per payable that has any.
//!
//! In a series, the payee's coordinates go on every record, and what identifies one
//! payment document — the barcode, the copy-and-paste code, the tax slip's data and the
//! scheduled day — on the first only, as the tax charges do: a slip is never paid twice.
//! For the same reason a slip is on one open payable of a workspace at a time: a
//! barcode (in either form, [`rules::barcode_key`]) or a Pix copy-and-paste code that
//! another pending payable not rejected at the gate already has is refused, 409
//! `duplicate_bill` naming it ([`refuse_duplicate`]), whichever door writes it, and so
//! is a reopen that would make a second open payable of the slip. The duplicates a rule
//! cannot refuse (the same vendor and amount twice) are listed, `bills/duplicates.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::domain::coordinates::{self as rules, Refusal, TaxData, TaxKind};
use crate::domain::dates::Timestamp;
use crate::error::{ApiError, ErrorCode};
use crate::ops::machinery::common::unprocessable;
use crate::ops::machinery::validate::nullable;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn, Row};

/// The request fields only a payable takes: its operation and its coordinates (a
/// receivable's schemas leave them out). Pinned against the types by a test.
pub const PAYABLE_ONLY: &[&str] = &[
    "operation_kind",
    "barcode",
    "pix_copia_e_cola",
    "pix_key",
    "pix_key_type",
    "bank_code",
    "bank_ispb",
    "agency",
    "agency_digit",
    "account_number",
    "account_digit",
    "transfer_purpose",
    "tax_kind",
    "tax_data",
    "beneficiary_name",
    "beneficiary_document",
    "scheduled_to",
];

// The type of a Pix key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PixKeyType {
    Cpf,
    Cnpj,
    Email,
    Phone,
    Random,
}

impl PixKeyType {
    pub fn as_str(self) -> &'static str {
        match self {
            PixKeyType::Cpf => "cpf",
            PixKeyType::Cnpj => "cnpj",
            PixKeyType::Email => "email",
            PixKeyType::Phone => "phone",
            PixKeyType::Random => "random",
        }
    }
}

/// The coordinates a create or update sends: only the fields sent change, `null` clears
/// one (on a create, `null` is none).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct CoordinatesInput {
    /// Barcode (44 digits) or digitable line (47, 48); check digits verified.
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 255))]
    pub barcode: Option<Option<String>>,
    /// Pix BR Code; CRC verified.
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 2000))]
    pub pix_copia_e_cola: Option<Option<String>>,
    /// Checked by pix_key_type (both or neither).
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 255))]
    pub pix_key: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub pix_key_type: Option<Option<PixKeyType>>,
    /// The payee's bank (COMPE, 3 digits).
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 30))]
    pub bank_code: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 8))]
    pub bank_ispb: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 50))]
    pub agency: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 5))]
    pub agency_digit: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 50))]
    pub account_number: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 5))]
    pub account_digit: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 100))]
    pub transfer_purpose: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub tax_kind: Option<Option<TaxKind>>,
    /// A tax slip paid by its data (needs tax_kind).
    #[serde(deserialize_with = "nullable")]
    pub tax_data: Option<Option<TaxData>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 255))]
    pub beneficiary_name: Option<Option<String>>,
    /// CPF or CNPJ; check digits verified.
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 20))]
    pub beneficiary_document: Option<Option<String>>,
    /// When the bank pays it (a date: its midnight UTC).
    #[serde(deserialize_with = "nullable")]
    #[schemars(with = "Option<String>", extend("format" = "date-time"))]
    pub scheduled_to: Option<Option<String>>,
}

/// A payable's coordinates as stored and answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct PaymentCoordinates {
    pub barcode: Option<String>,
    pub pix_copia_e_cola: Option<String>,
    pub pix_key: Option<String>,
    #[schemars(extend("enum" = ["cpf", "cnpj", "email", "phone", "random", null]))]
    pub pix_key_type: Option<String>,
    pub bank_code: Option<String>,
    pub bank_ispb: Option<String>,
    pub agency: Option<String>,
    pub agency_digit: Option<String>,
    pub account_number: Option<String>,
    pub account_digit: Option<String>,
    pub transfer_purpose: Option<String>,
    #[schemars(extend("enum" = ["itbi", "icms", "iss", "iptu", "fgts", "dare", "darf", "gru", "gps", null]))]
    pub tax_kind: Option<String>,
    // As sent: its members are the request's.
    #[schemars(with = "Option<Map<String, Value>>")]
    pub tax_data: Option<TaxData>,
    pub beneficiary_name: Option<String>,
    pub beneficiary_document: Option<String>,
    pub scheduled_to: Option<Timestamp>,
}

/// `value` where the request sent one (`null`: none), else `kept`.
fn pick<T>(sent: Option<Option<T>>, kept: Option<T>) -> Option<T> {
    match sent {
        Some(value) => value,
        None => kept,
    }
}

/// A text sent: trimmed, a blank one none.
fn text(sent: Option<Option<String>>) -> Option<Option<String>> {
    sent.map(|value| value.map(|v| v.trim().to_string()).filter(|v| !v.is_empty()))
}

fn refused(field: &str, refusal: Refusal) -> ApiError {
    unprocessable(field, refusal.reason, refusal.message)
}

/// A field its rule refuses unless it holds digits in the expected form.
fn check_form(field: &str, value: &Option<String>, valid: fn(&str) -> bool, message: &str) -> Result<(), ApiError> {
    match value {
        Some(v) if !valid(v) => Err(unprocessable(field, "invalid_format", message)),
        _ => Ok(()),
    }
}

impl PaymentCoordinates {
    /// Whether it holds nothing (no row is stored).
    pub fn is_empty(&self) -> bool {
        *self == PaymentCoordinates::default()
    }

    /// These coordinates with what `input` sent, each checked and in its stored form;
    /// a Pix key needs its type (and a type its key), tax data its tax kind.
    pub fn with(&self, input: CoordinatesInput) -> Result<PaymentCoordinates, ApiError> {
        let kept = self.clone();
        let barcode = match text(input.barcode) {
            Some(Some(code)) => Some(rules::barcode(&code).map_err(|r| refused("barcode", r))?),
            sent => pick(sent, kept.barcode),
        };
        let pix_copia_e_cola = match text(input.pix_copia_e_cola) {
            Some(Some(code)) => Some(rules::pix_copia_e_cola(&code).map_err(|r| refused("pix_copia_e_cola", r))?),
            sent => pick(sent, kept.pix_copia_e_cola),
        };
        let pix_key_type = pick(input.pix_key_type.map(|t| t.map(|t| t.as_str().to_string())), kept.pix_key_type);
        let pix_key = pick(text(input.pix_key), kept.pix_key);
        let pix_key = match (&pix_key_type, pix_key) {
            (Some(kind), Some(key)) => Some(rules::pix_key(kind, &key).map_err(|r| refused("pix_key", r))?),
            (None, Some(_)) => {
                return Err(unprocessable("pix_key_type", "required", "pix_key needs its pix_key_type"));
            }
            (Some(_), None) => return Err(unprocessable("pix_key", "required", "pix_key_type needs its pix_key")),
            (None, None) => None,
        };
        let beneficiary_document = match text(input.beneficiary_document) {
            Some(Some(document)) => {
                Some(rules::person_document(&document).map_err(|r| refused("beneficiary_document", r))?)
            }
            sent => pick(sent, kept.beneficiary_document),
        };
        let scheduled_to = match text(input.scheduled_to) {
            Some(Some(at)) => Some(Timestamp::parse_input(&at).ok_or_else(|| {
                unprocessable(
                    "scheduled_to",
                    "invalid_date",
                    "scheduled_to must be an RFC 3339 date-time or a date YYYY-MM-DD",
                )
            })?),
            Some(None) => None,
            None => kept.scheduled_to,
        };
        let tax_kind = pick(input.tax_kind.map(|k| k.map(|k| k.as_str().to_string())), kept.tax_kind);
        let tax_data = pick(input.tax_data, kept.tax_data);
        if tax_data.is_some() && tax_kind.is_none() {
            return Err(unprocessable("tax_kind", "required", "tax_data needs its tax_kind"));
        }
        let coordinates = PaymentCoordinates {
            barcode,
            pix_copia_e_cola,
            pix_key,
            pix_key_type,
            bank_code: pick(text(input.bank_code), kept.bank_code),
            bank_ispb: pick(text(input.bank_ispb), kept.bank_ispb),
            agency: pick(text(input.agency), kept.agency),
            agency_digit: pick(text(input.agency_digit), kept.agency_digit),
            account_number: pick(text(input.account_number), kept.account_number),
            account_digit: pick(text(input.account_digit), kept.account_digit),
            transfer_purpose: pick(text(input.transfer_purpose), kept.transfer_purpose),
            tax_kind,
            tax_data,
            beneficiary_name: pick(text(input.beneficiary_name), kept.beneficiary_name),
            beneficiary_document,
            scheduled_to,
        };
        check_form("bank_code", &coordinates.bank_code, rules::is_compe, "bank_code must be the 3-digit COMPE code")?;
        check_form("bank_ispb", &coordinates.bank_ispb, rules::is_ispb, "bank_ispb must be the bank's 8-digit ISPB")?;
        check_form(
            "agency",
            &coordinates.agency,
            rules::is_number,
            "agency must be digits (its digit in agency_digit)",
        )?;
        check_form(
            "agency_digit",
            &coordinates.agency_digit,
            rules::is_check_digit,
            "agency_digit must be digits or X",
        )?;
        check_form(
            "account_number",
            &coordinates.account_number,
            rules::is_number,
            "account_number must be digits (its digit in account_digit)",
        )?;
        check_form(
            "account_digit",
            &coordinates.account_digit,
            rules::is_check_digit,
            "account_digit must be digits or X",
        )?;
        Ok(coordinates)
    }

    /// What the records after the first of a series take: the payee's coordinates,
    /// without what identifies the first one's payment document.
    pub fn for_the_rest_of_a_series(&self) -> PaymentCoordinates {
        PaymentCoordinates { barcode: None, pix_copia_e_cola: None, tax_data: None, scheduled_to: None, ..self.clone() }
    }
}

const COLUMNS: &str = "barcode, pix_copia_e_cola, pix_key, pix_key_type, bank_code, bank_ispb, agency, agency_digit, \
     account_number, account_digit, transfer_purpose, tax_kind, tax_data, beneficiary_name, beneficiary_document, scheduled_to";

fn from_row(row: &Row<'_>) -> Result<PaymentCoordinates, crate::storage::Error> {
    let tax_data: Option<String> = row.try_get(12)?;
    let tax_data = match tax_data {
        Some(json) => Some(
            serde_json::from_str(&json).map_err(|e| crate::storage::Error::Corrupt(format!("stored tax_data: {e}")))?,
        ),
        None => None,
    };
    Ok(PaymentCoordinates {
        barcode: row.try_get(0)?,
        pix_copia_e_cola: row.try_get(1)?,
        pix_key: row.try_get(2)?,
        pix_key_type: row.try_get(3)?,
        bank_code: row.try_get(4)?,
        bank_ispb: row.try_get(5)?,
        agency: row.try_get(6)?,
        agency_digit: row.try_get(7)?,
        account_number: row.try_get(8)?,
        account_digit: row.try_get(9)?,
        transfer_purpose: row.try_get(10)?,
        tax_kind: row.try_get(11)?,
        tax_data,
        beneficiary_name: row.try_get(13)?,
        beneficiary_document: row.try_get(14)?,
        scheduled_to: row.try_get(15)?,
    })
}

/// The stored coordinates of the payable `billing_id` (none: empty).
pub async fn read(conn: &mut Conn, ws: &Membership, billing_id: &str) -> Result<PaymentCoordinates, ApiError> {
    let found =
        sql::query(format!("SELECT {COLUMNS} FROM payment_coordinates WHERE workspace_id = $1 AND billing_id = $2"))
            .bind(&ws.workspace_id)
            .bind(billing_id)
            .map_optional(&mut *conn, from_row)
            .await?;
    Ok(found.unwrap_or_default())
}

/// Replaces the stored coordinates of the payable `billing_id` (empty: removes them); a
/// payee's bank it did not have is checked against the bank list first
/// ([`refs::payee_bank`](crate::ops::machinery::refs::payee_bank)).
pub async fn write(
    conn: &mut Conn,
    ws: &Membership,
    billing_id: &str,
    coordinates: &PaymentCoordinates,
) -> Result<(), ApiError> {
    let kept: Option<(Option<String>, Option<String>)> = sql::query(
        "DELETE FROM payment_coordinates WHERE workspace_id = $1 AND billing_id = $2 RETURNING bank_code, bank_ispb",
    )
    .bind(&ws.workspace_id)
    .bind(billing_id)
    .map_optional(&mut *conn, |row| Ok((row.try_get(0)?, row.try_get(1)?)))
    .await?;
    refuse_duplicate(conn, ws, billing_id, coordinates).await?;
    let (kept_code, kept_ispb) = kept.unwrap_or_default();
    let sent = (coordinates.bank_code.as_deref(), coordinates.bank_ispb.as_deref());
    crate::ops::machinery::refs::payee_bank(conn, sent, (kept_code.as_deref(), kept_ispb.as_deref())).await?;
    if coordinates.is_empty() {
        return Ok(());
    }
    let tax_data = match &coordinates.tax_data {
        Some(data) => Some(serde_json::to_string(data).map_err(|_| ApiError::internal())?),
        None => None,
    };
    sql::query(format!(
        "INSERT INTO payment_coordinates (billing_id, workspace_id, {COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)"
    ))
    .bind(billing_id)
    .bind(&ws.workspace_id)
    .bind(&coordinates.barcode)
    .bind(&coordinates.pix_copia_e_cola)
    .bind(&coordinates.pix_key)
    .bind(&coordinates.pix_key_type)
    .bind(&coordinates.bank_code)
    .bind(&coordinates.bank_ispb)
    .bind(&coordinates.agency)
    .bind(&coordinates.agency_digit)
    .bind(&coordinates.account_number)
    .bind(&coordinates.account_digit)
    .bind(&coordinates.transfer_purpose)
    .bind(&coordinates.tax_kind)
    .bind(tax_data)
    .bind(&coordinates.beneficiary_name)
    .bind(&coordinates.beneficiary_document)
    .bind(coordinates.scheduled_to)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Refuses making the payable `billing_id` pending again (a reopen) while its slip is
/// another open payable's: the one created while this one was cancelled or paid keeps
/// it ([`refuse_duplicate`]).
pub async fn refuse_reopened_duplicate(conn: &mut Conn, ws: &Membership, billing_id: &str) -> Result<(), ApiError> {
    let coordinates = read(conn, ws, billing_id).await?;
    refuse_duplicate(conn, ws, billing_id, &coordinates).await
}

/// Refuses the coordinates of the payable `billing_id` when their barcode or Pix
/// copy-and-paste code is another open payable's (pending, not rejected at the gate): 409
/// `duplicate_bill`, naming the field and the other payable. A barcode stored in the
/// other form (a line for a barcode) is the same slip: the candidates in another form are
/// compared by their key.
async fn refuse_duplicate(
    conn: &mut Conn,
    ws: &Membership,
    billing_id: &str,
    coordinates: &PaymentCoordinates,
) -> Result<(), ApiError> {
    let open = format!(
        "FROM payment_coordinates c JOIN billings b ON b.workspace_id = c.workspace_id AND b.id = c.billing_id
         WHERE c.workspace_id = $1 AND c.billing_id <> $2 AND b.kind = 'payable' AND b.status = 'pending' AND {}",
        crate::ops::bills::approval::owed("b")
    );
    if let Some(code) = &coordinates.barcode {
        let key = rules::barcode_key(code);
        let found = sql::query(format!(
            "SELECT b.id, b.description, c.barcode {open} AND (c.barcode = $3 OR LENGTH(c.barcode) <> $4) ORDER BY b.id"
        ))
        .bind(&ws.workspace_id)
        .bind(billing_id)
        .bind(code)
        .bind(code.len() as i64)
        .map_all(&mut *conn, |row| {
            Ok((row.try_get::<String, _>(0)?, row.try_get::<String, _>(1)?, row.try_get::<String, _>(2)?))
        })
        .await?;
        if let Some((id, description, _)) = found.into_iter().find(|(_, _, other)| rules::barcode_key(other) == key) {
            return Err(duplicate("barcode", &id, &description));
        }
    }
    if let Some(code) = &coordinates.pix_copia_e_cola {
        let found =
            sql::query(format!("SELECT b.id, b.description {open} AND c.pix_copia_e_cola = $3 ORDER BY b.id LIMIT 1"))
                .bind(&ws.workspace_id)
                .bind(billing_id)
                .bind(code)
                .map_optional(&mut *conn, |row| Ok((row.try_get::<String, _>(0)?, row.try_get::<String, _>(1)?)))
                .await?;
        if let Some((id, description)) = found {
            return Err(duplicate("pix_copia_e_cola", &id, &description));
        }
    }
    Ok(())
}

fn duplicate(field: &str, id: &str, description: &str) -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        format!(
            "The open payable {} ({id}) already has this {field}: the same slip is not paid twice",
            crate::domain::text::quoted(description)
        ),
    )
    .with_details(serde_json::json!({ "field": field, "reason": "duplicate_bill", "payable_id": id }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::machinery::validate::schema_of;

    /// The payable-only request fields are the operation and every coordinate a
    /// request takes, and every coordinate is answered.
    #[test]
    fn the_payable_only_fields_are_the_coordinates_and_the_operation() {
        let sent: Vec<String> =
            schema_of::<CoordinatesInput>()["properties"].as_object().unwrap().keys().cloned().collect();
        let answered: Vec<String> =
            schema_of::<PaymentCoordinates>()["properties"].as_object().unwrap().keys().cloned().collect();
        let mut listed: Vec<String> = PAYABLE_ONLY.iter().map(|f| f.to_string()).collect();
        listed.retain(|f| f != "operation_kind");
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        assert_eq!(sorted(sent), sorted(listed.clone()));
        assert_eq!(sorted(answered), sorted(listed));
    }

    fn input(json: Value) -> CoordinatesInput {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn coordinates_are_checked_and_kept_in_the_banks_form() {
        let empty = PaymentCoordinates::default();
        let written = empty
            .with(input(serde_json::json!({
                "barcode": "34191.79001 01043.510047 91020.150008 1 84340000016200",
                "pix_key": "(11) 98765-4321", "pix_key_type": "phone",
                "beneficiary_document": "11.222.333/0001-81", "bank_code": "341", "agency": "0001",
                "scheduled_to": "2026-12-10",
            })))
            .unwrap();
        assert_eq!(written.barcode.as_deref(), Some("34191790010104351004791020150008184340000016200"));
        assert_eq!(written.pix_key.as_deref(), Some("+5511987654321"));
        assert_eq!(written.beneficiary_document.as_deref(), Some("11222333000181"));
        assert_eq!(written.scheduled_to.unwrap().to_string(), "2026-12-10T00:00:00Z");
        // A later change keeps what it does not send, and null clears.
        let changed = written.with(input(serde_json::json!({ "barcode": null, "agency": "0002" }))).unwrap();
        assert_eq!(
            (changed.barcode, changed.agency.as_deref(), changed.pix_key),
            (None, Some("0002"), written.pix_key.clone())
        );
        let refused = |json: Value| written.with(input(json)).unwrap_err().details.unwrap_or_default();
        for (json, field, reason) in [
            (serde_json::json!({ "pix_key_type": null }), "pix_key_type", "required"),
            (serde_json::json!({ "pix_key": null }), "pix_key", "required"),
            (serde_json::json!({ "pix_key_type": "cpf" }), "pix_key", "invalid_pix_key"),
            (
                serde_json::json!({ "barcode": "34191790010104351004791020150008184340000016201" }),
                "barcode",
                "invalid_check_digit",
            ),
            (serde_json::json!({ "tax_data": { "tax_code": "0561" } }), "tax_kind", "required"),
            (serde_json::json!({ "bank_code": "34" }), "bank_code", "invalid_format"),
            (serde_json::json!({ "account_digit": "-" }), "account_digit", "invalid_format"),
            (serde_json::json!({ "scheduled_to": "tomorrow" }), "scheduled_to", "invalid_date"),
        ] {
            let details = refused(json.clone());
            assert_eq!((details["field"].as_str(), details["reason"].as_str()), (Some(field), Some(reason)), "{json}");
        }
        let rest = written.for_the_rest_of_a_series();
        assert_eq!((rest.barcode, rest.scheduled_to, rest.pix_key), (None, None, written.pix_key.clone()));
    }
}
