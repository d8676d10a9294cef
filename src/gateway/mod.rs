//! Kobana's banking API, the gateway through which a payable is paid: the few calls the
//! dispatch needs, with the bodies its OpenAPI document gives them (`/v2/payment/…`),
//! and the signature of the events it sends back. One place, like `aws.rs`: the
//! operations ask it, nothing else talks to the bank.
//!
//! * `POST /v2/payment/{bank_billets|utilities|pix|taxes}` (and `/v2/transfer/{pix|ted}`
//!   to a Pix key or a bank account) creates a payment from a source account
//!   (`financial_account_uid`) and what it pays — the slip's code, the Pix code, the key,
//!   the payee's bank account, a tax guide's data —, under an `X-Idempotency-Key` the
//!   caller derives from the payable: a dispatch retried after a timeout finds the
//!   payment the first attempt made instead of paying twice. (The document lists that
//!   header on every one of these paths but `/v2/payment/taxes`; it is sent there too.)
//! * `PUT {path}/{uid}/cancel` asks for its cancellation.
//! * `POST /v2/charge/pix` and `POST /v1/bank_billets` issue a receivable's charge (a
//!   Pix, a boleto); `PUT /v2/charge/pix/{uid}/cancel` and `PUT /v1/bank_billets/{id}/cancel`
//!   take it back.
//! * Events (`POST /v1/webhooks/kobana` on this server) carry a payment or a charge as it
//!   stands; their body is signed with the webhook's secret ([`Gateway::verify`]).
//!
//! A call has a deadline; no answer, a 5xx or a 429 is [`GatewayError::Unavailable`]
//! (the caller answers 503 with `Retry-After` and writes nothing), a 4xx is
//! [`GatewayError::Refused`] with the gateway's reasons. Credentials come from the
//! configuration or from Secrets Manager (`KFIN_KOBANA_SECRET_ID`), read once. The
//! embedded stand-in of the same API ([`standin`]) serves `make run` and the tests.

pub mod number;
pub mod standin;
mod status;

pub use status::{ChargeStatus, PaymentStatus, RegistrationStatus};

use std::time::Duration;

use aws_lc_rs::hmac;
use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::Full;
use serde::{Deserialize, Serialize};

use crate::config::{GatewayConfig, GatewayCredentials};
use crate::domain::coordinates::TaxData;
use crate::domain::money::Cents;
use crate::https::Https;

/// How long one call to the gateway may take, answer included.
const DEADLINE: Duration = Duration::from_secs(10);

/// The header of an event's signature: `sha256=` and the HMAC-SHA256 of the raw body
/// under the webhook's secret, in lowercase hex.
pub const SIGNATURE_HEADER: &str = "x-kobana-signature";

/// What the gateway needs to call and to be called: its API token and the secret its
/// events are signed with.
#[derive(Clone)]
pub struct Credentials {
    pub api_token: String,
    pub webhook_secret: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials { .. }")
    }
}

/// Why a call did not succeed.
#[derive(Debug)]
pub enum GatewayError {
    /// The integration is not set up here (no gateway URL or credentials).
    NotConnected,
    /// No answer in time, or the gateway failed (5xx, 429): nothing is known to have
    /// happened, and the same call may be retried with the same key.
    Unavailable(String),
    /// The gateway refused the request (4xx): its status and reasons.
    Refused { status: StatusCode, reasons: Vec<Reason> },
}

impl std::fmt::Display for GatewayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GatewayError::NotConnected => f.write_str("the banking gateway is not connected"),
            GatewayError::Unavailable(why) => write!(f, "the banking gateway did not answer: {why}"),
            GatewayError::Refused { status, reasons } => {
                write!(f, "the banking gateway refused the request ({status})")?;
                for reason in reasons {
                    write!(f, "; {}", reason.text())?;
                }
                Ok(())
            }
        }
    }
}

/// One reason of a refusal, as the banking API's error body gives it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reason {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub param: Option<String>,
    #[serde(default)]
    pub detail: Option<serde_json::Value>,
}

impl Reason {
    fn text(&self) -> String {
        let detail = match &self.detail {
            Some(serde_json::Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        [self.title.as_deref().unwrap_or(""), &detail]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(": ")
    }
}

/// The banking API's error body (`v2_error`).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ErrorBody {
    pub status: u16,
    pub errors: Vec<Reason>,
}

/// Which payment the gateway makes: `/v2/payment/{collection}`, or a transfer
/// (`/v2/transfer/{pix|ted}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaymentKind {
    /// A boleto, by its barcode or digitable line (`code`).
    #[default]
    BankBillet,
    /// A utility bill or a tax slip with a barcode (`code`).
    Utility,
    /// A Pix by its copia-e-cola code (`qrcode`).
    Pix,
    /// A Pix to a key (`key`, `key_type`): a transfer.
    PixTransfer,
    /// A TED to a bank account (`bank_account`, `beneficiary`): a transfer.
    Ted,
    /// A tax guide paid by its data (`kind`, `format` `data`, `data`).
    Tax,
}

impl PaymentKind {
    pub const ALL: [PaymentKind; 6] = [
        PaymentKind::BankBillet,
        PaymentKind::Utility,
        PaymentKind::Pix,
        PaymentKind::PixTransfer,
        PaymentKind::Ted,
        PaymentKind::Tax,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PaymentKind::BankBillet => "bank_billet",
            PaymentKind::Utility => "utility",
            PaymentKind::Pix => "pix",
            PaymentKind::PixTransfer => "pix_transfer",
            PaymentKind::Ted => "ted",
            PaymentKind::Tax => "tax",
        }
    }

    pub fn parse(s: &str) -> Option<PaymentKind> {
        PaymentKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The path its payments are made at; `{path}/{uid}/cancel` cancels one.
    pub fn path(self) -> &'static str {
        match self {
            PaymentKind::BankBillet => "/v2/payment/bank_billets",
            PaymentKind::Utility => "/v2/payment/utilities",
            PaymentKind::Pix => "/v2/payment/pix",
            PaymentKind::Tax => "/v2/payment/taxes",
            PaymentKind::PixTransfer => "/v2/transfer/pix",
            PaymentKind::Ted => "/v2/transfer/ted",
        }
    }

    /// Whether the gateway makes it as a transfer: its events are `transfer.db.updated`.
    pub fn is_transfer(self) -> bool {
        matches!(self, PaymentKind::PixTransfer | PaymentKind::Ted)
    }
}

/// A payment to make (`v2_new_payment_bank_billet`, `…_pix_single`, `…_tax`,
/// `v2_new_transfer_pix`, `…_ted`): the amount, the source account and what is paid,
/// on a day or at once. Each kind fills its own fields.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NewPayment {
    #[serde(with = "number")]
    pub amount: Cents,
    pub financial_account_uid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qrcode: Option<String>,
    /// A transfer's target (`v2_new_transfer_pix`): `key`, by a Pix key.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// A TED's payee's account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_account: Option<BankAccount>,
    /// A TED's purpose code (its finalidade, e.g. `98`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_purpose: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beneficiary: Option<Beneficiary>,
    /// A tax guide's kind: `darf`, `gps`, `fgts`, … (`v2_new_payment_tax.kind`).
    #[serde(rename = "kind", default, skip_serializing_if = "Option::is_none")]
    pub tax_kind: Option<String>,
    /// How a tax guide is given: `code` (its barcode, the default) or `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<TaxData>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_to: Option<String>,
    /// The payable's id: what an event is matched back to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
}

/// A bank account as the banking API names it (a TED's `bank_account`, a transfer's
/// `target.bank_account`): the bank by its COMPE number or its ISPB, the branch and the
/// account with their check digits. The account's type and holder's document are
/// answered, never sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BankAccount {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compe_number: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ispb_number: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agency_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agency_digit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_digit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_number: Option<String>,
}

/// Whom a payment pays: sent with a transfer, read by the gateway from a slip or a key.
/// What is not known is left out (the document takes neither member null).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Beneficiary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_number: Option<String>,
}

/// A payment as the gateway has it (`v2_payment_bank_billet`, `v2_payment_pix`,
/// `v2_payment_tax`, `v2_transfer`; the fields the dispatch reads). `status`: `pending`,
/// `scheduled`, `confirmed` (paid), `rejected`, `canceled` (the document enumerates them
/// for payments; a transfer's are the same words).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Payment {
    pub uid: String,
    /// A Pix transfer has none of its own: the event's code tells ([`Event::subject`]).
    #[serde(default)]
    pub kind: PaymentKind,
    #[serde(with = "number")]
    pub amount: Cents,
    pub status: PaymentStatus,
    #[serde(default)]
    pub scheduled_to: Option<String>,
    #[serde(default)]
    pub confirmed_at: Option<String>,
    #[serde(default)]
    pub rejected_at: Option<String>,
    #[serde(default)]
    pub rejected_error: Option<String>,
    #[serde(default)]
    pub transaction_code: Option<String>,
    #[serde(default)]
    pub transaction_date: Option<String>,
    pub financial_account_uid: String,
    #[serde(default)]
    pub external_id: Option<String>,
    #[serde(default)]
    pub beneficiary: Option<Beneficiary>,
    /// A transfer's target: a TED's account and whom it pays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// A TED's purpose as the bank reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_purpose: Option<TransferPurpose>,
    /// A tax payment's guide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax: Option<TaxGuide>,
    pub created_at: String,
    pub updated_at: String,
}

impl Payment {
    /// Whom it paid, as the gateway names them: its beneficiary, else a transfer's
    /// target's or a tax guide's (the first with a name; none: an empty one).
    pub fn payee(&self) -> Beneficiary {
        let target = self.target.as_ref().and_then(|t| t.beneficiary.as_ref());
        let guide = self.tax.as_ref().and_then(|t| t.beneficiary.as_ref());
        [self.beneficiary.as_ref(), target, guide]
            .into_iter()
            .flatten()
            .find(|b| b.name.is_some())
            .cloned()
            .unwrap_or_default()
    }
}

/// A transfer's target (`v2_transfer.target`): its kind (`ted`, `pix`), the account and
/// whom it pays.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Target {
    #[serde(default)]
    pub transfer_kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_account: Option<BankAccount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beneficiary: Option<Beneficiary>,
}

/// A TED's purpose (`v2_transfer.transfer_purpose`): its code and what it means.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TransferPurpose {
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
}

/// A tax payment's guide (`v2_payment_tax.tax`): its form (`code` or `data`), its kind,
/// its barcode or its data as sent, and whom it pays.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TaxGuide {
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub data: Option<serde_json::Value>,
    #[serde(default)]
    pub beneficiary: Option<Beneficiary>,
}

/// `{"status": 201, "data": …}`: how the banking API wraps what it answers.
#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope<T> {
    pub status: u16,
    pub data: T,
}

/// An event the gateway sends (`v1_event_object`): the object as it stands after the
/// change — `payment.db.updated` a payment, `pix.db.updated` a Pix charge,
/// `bank_billet.updated` a boleto, `transfer.db.updated` a Pix transfer or a TED.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    pub id: i64,
    pub code: String,
    pub data: serde_json::Value,
    #[serde(default)]
    pub occurred_at: Option<String>,
}

/// What an event is about.
#[derive(Debug, Clone)]
pub enum Subject {
    Payment(Box<Payment>),
    Pix(PixCharge),
    BankBillet(BankBillet),
}

impl Event {
    /// Its object, read by its code's first word; `None` for any other event.
    pub fn subject(&self) -> Result<Option<Subject>, String> {
        let read = |e: serde_json::Error| format!("the event's {} is not readable: {e}", self.code);
        let data = self.data.clone();
        Ok(Some(match self.code.split('.').next() {
            Some("payment") => Subject::Payment(Box::new(serde_json::from_value(data).map_err(read)?)),
            Some("transfer") => {
                // A TED says so (`kind`); a Pix transfer's kind is a Pix payment's.
                let mut transfer: Payment = serde_json::from_value(data).map_err(read)?;
                if transfer.kind != PaymentKind::Ted {
                    transfer.kind = PaymentKind::PixTransfer;
                }
                Subject::Payment(Box::new(transfer))
            }
            Some("pix") => Subject::Pix(serde_json::from_value(data).map_err(read)?),
            Some("bank_billet") => Subject::BankBillet(serde_json::from_value(data).map_err(read)?),
            _ => return Ok(None),
        }))
    }
}

/// Whom a charge bills (`v2_pix.payer`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Payer {
    pub document_number: String,
    pub name: String,
}

/// A Pix charge to issue (`v2_pix`, `POST /v2/charge/pix`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewPixCharge {
    #[serde(with = "number")]
    pub amount: Cents,
    pub pix_account_uid: String,
    pub expire_at: String,
    pub payer: Payer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
}

/// A Pix charge's code.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PixCode {
    #[serde(default)]
    pub emv: Option<String>,
}

/// Where a charge stands at the gateway, as a Pix charge and a boleto both answer it:
/// its commercial status, its registration at the bank, its payment and its page.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChargeState {
    pub status: ChargeStatus,
    #[serde(default)]
    pub registration_status: Option<RegistrationStatus>,
    #[serde(default)]
    pub paid_at: Option<String>,
    #[serde(default, with = "number::optional")]
    pub paid_amount: Option<Cents>,
    #[serde(default)]
    pub url: Option<String>,
}

/// A Pix charge as the gateway has it (`v2_pix`, the fields the charge reads). `status`
/// (commercial): `opened`, `paid`, `overdue`, `canceled`, `generation_failed`;
/// `registration_status`: `pending`, `confirmed`, `rejected`, `failed`, …
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PixCharge {
    pub uid: String,
    #[serde(with = "number")]
    pub amount: Cents,
    #[serde(default)]
    pub pix_account_uid: Option<String>,
    #[serde(flatten)]
    pub state: ChargeState,
    #[serde(default)]
    pub qrcode: Option<PixCode>,
    #[serde(default)]
    pub external_id: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// A boleto to issue (`v1_bank_billet_object`, `POST /v1/bank_billets`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewBankBillet {
    #[serde(with = "number")]
    pub amount: Cents,
    pub expire_at: String,
    pub bank_billet_account_id: i64,
    pub customer_person_name: String,
    pub customer_cnpj_cpf: String,
    pub customer_zipcode: String,
    pub customer_address: String,
    pub customer_address_number: String,
    pub customer_neighborhood: String,
    pub customer_city_name: String,
    pub customer_state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A boleto as the gateway has it (the fields the charge reads). `status`: `generating`,
/// `opened`, `paid`, `overdue`, `canceled`, `generation_failed`, …
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BankBillet {
    pub id: i64,
    #[serde(default)]
    pub uid: Option<String>,
    #[serde(with = "number")]
    pub amount: Cents,
    #[serde(flatten)]
    pub state: ChargeState,
    #[serde(default)]
    pub line: Option<String>,
    #[serde(default)]
    pub barcode: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
}

/// The signature header's value of `body` under `secret`.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes()), body);
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

/// The client of the banking API.
pub struct Gateway {
    base_url: Option<String>,
    credentials: GatewayCredentials,
    secret: tokio::sync::OnceCell<Credentials>,
    /// Made on the first call: a server that never calls the gateway never loads the
    /// TLS roots for it (cold start).
    http: std::sync::OnceLock<Https>,
    /// Where its secret is read (`GatewayCredentials::Secret`).
    aws: crate::aws::Aws,
}

impl Gateway {
    pub fn new(config: &GatewayConfig, aws: &crate::aws::Aws) -> Gateway {
        Gateway {
            aws: aws.clone(),
            base_url: config.url.clone(),
            credentials: config.credentials.clone(),
            secret: tokio::sync::OnceCell::new(),
            http: std::sync::OnceLock::new(),
        }
    }

    /// Its credentials: the configured ones, or the secret's (read once).
    async fn credentials(&self) -> Result<&Credentials, GatewayError> {
        match &self.credentials {
            GatewayCredentials::None => Err(GatewayError::NotConnected),
            GatewayCredentials::Static(credentials) => Ok(credentials),
            GatewayCredentials::Secret { secret_id } => {
                self.secret
                    .get_or_try_init(|| async {
                        let text = self
                            .aws
                            .get_secret_string(secret_id)
                            .await
                            .map_err(|e| GatewayError::Unavailable(format!("the gateway's secret: {e}")))?
                            .ok_or_else(|| GatewayError::Unavailable("the gateway's secret has no value".into()))?;
                        parse_secret(&text).map_err(GatewayError::Unavailable)
                    })
                    .await
            }
        }
    }

    /// Whether `signature` (the header's value) signs `body` with the webhook's secret.
    /// False when the integration is not connected.
    pub async fn verify(&self, body: &[u8], signature: Option<&str>) -> bool {
        let Ok(credentials) = self.credentials().await else { return false };
        let Some(tag) = signature.and_then(|s| s.trim().strip_prefix("sha256=")).and_then(unhex) else {
            return false;
        };
        let key = hmac::Key::new(hmac::HMAC_SHA256, credentials.webhook_secret.as_bytes());
        hmac::verify(&key, body, &tag).is_ok()
    }

    /// Creates a payment, or finds the one an earlier call with the same key made.
    pub async fn create_payment(
        &self,
        kind: PaymentKind,
        payment: &NewPayment,
        idempotency_key: &str,
    ) -> Result<Payment, GatewayError> {
        let body = serde_json::to_vec(payment).map_err(|e| GatewayError::Unavailable(e.to_string()))?;
        let answer = self.call(Method::POST, kind.path(), Some(body), idempotency_key).await?;
        read::<Envelope<Payment>>(&answer).map(|e| e.data)
    }

    /// Asks the gateway to cancel a payment it has not made yet.
    pub async fn cancel_payment(
        &self,
        kind: PaymentKind,
        uid: &str,
        idempotency_key: &str,
    ) -> Result<(), GatewayError> {
        let path = format!("{}/{uid}/cancel", kind.path());
        self.call(Method::PUT, &path, None, idempotency_key).await.map(drop)
    }

    /// Issues a Pix charge, or finds the one an earlier call with the same key issued.
    pub async fn create_pix_charge(
        &self,
        charge: &NewPixCharge,
        idempotency_key: &str,
    ) -> Result<PixCharge, GatewayError> {
        let body = serde_json::to_vec(charge).map_err(|e| GatewayError::Unavailable(e.to_string()))?;
        let answer = self.call(Method::POST, "/v2/charge/pix", Some(body), idempotency_key).await?;
        read::<Envelope<PixCharge>>(&answer).map(|e| e.data)
    }

    /// Asks for a Pix charge's cancellation (confirmed later, by an event).
    pub async fn cancel_pix_charge(&self, uid: &str, idempotency_key: &str) -> Result<(), GatewayError> {
        self.call(Method::PUT, &format!("/v2/charge/pix/{uid}/cancel"), None, idempotency_key).await.map(drop)
    }

    /// Issues a boleto, or finds the one an earlier call with the same key issued.
    pub async fn create_bank_billet(
        &self,
        billet: &NewBankBillet,
        idempotency_key: &str,
    ) -> Result<BankBillet, GatewayError> {
        let body = serde_json::to_vec(billet).map_err(|e| GatewayError::Unavailable(e.to_string()))?;
        let answer = self.call(Method::POST, "/v1/bank_billets", Some(body), idempotency_key).await?;
        read::<BankBillet>(&answer)
    }

    /// Cancels a boleto: it can no longer be paid, at once.
    pub async fn cancel_bank_billet(&self, id: i64, idempotency_key: &str) -> Result<BankBillet, GatewayError> {
        let answer = self.call(Method::PUT, &format!("/v1/bank_billets/{id}/cancel"), None, idempotency_key).await?;
        read::<BankBillet>(&answer)
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        idempotency_key: &str,
    ) -> Result<Bytes, GatewayError> {
        let base = self.base_url.as_deref().ok_or(GatewayError::NotConnected)?;
        let credentials = self.credentials().await?;
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("{base}{path}"))
            .header("authorization", format!("Bearer {}", credentials.api_token))
            .header("x-idempotency-key", idempotency_key)
            .header("user-agent", "Kobana Finance MCP <finance@kobana.com.br>")
            .header("accept", "application/json");
        if body.is_some() {
            request = request.header("content-type", "application/json");
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| GatewayError::Unavailable(format!("the request: {e}")))?;
        let http = self.http.get_or_init(Https::new);
        let answer = match tokio::time::timeout(DEADLINE, http.send(request)).await {
            Err(_) => return Err(GatewayError::Unavailable(format!("no answer within {} s", DEADLINE.as_secs()))),
            Ok(Err(e)) => return Err(GatewayError::Unavailable(e.to_string())),
            Ok(Ok(answer)) => answer,
        };
        if answer.status.is_success() {
            return Ok(answer.body);
        }
        if answer.status.is_server_error() || answer.status == StatusCode::TOO_MANY_REQUESTS {
            return Err(GatewayError::Unavailable(format!("it answered {}", answer.status)));
        }
        let reasons = serde_json::from_slice::<ErrorBody>(&answer.body).map(|b| b.errors).unwrap_or_default();
        Err(GatewayError::Refused { status: answer.status, reasons })
    }
}

fn read<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, GatewayError> {
    serde_json::from_slice(body).map_err(|e| GatewayError::Unavailable(format!("an answer it could not read: {e}")))
}

/// The gateway's secret: `{"api_token": …, "webhook_secret": …}`.
pub fn parse_secret(text: &str) -> Result<Credentials, String> {
    #[derive(Deserialize)]
    struct Secret {
        api_token: String,
        webhook_secret: String,
    }
    let secret: Secret = serde_json::from_str(text)
        .map_err(|_| "the gateway's secret must be JSON with api_token and webhook_secret".to_string())?;
    Ok(Credentials { api_token: secret.api_token, webhook_secret: secret.webhook_secret })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_is_the_bodys_hmac_in_hex() {
        let signed = sign("secret", b"{}");
        assert!(signed.starts_with("sha256="));
        assert_eq!(signed.len(), "sha256=".len() + 64);
        assert_eq!(unhex(&signed[7..]).map(|b| b.len()), Some(32));
        assert_ne!(sign("secret", b"{ }"), signed);
        assert_ne!(sign("other", b"{}"), signed);
    }

    #[test]
    fn a_kind_is_stored_as_the_gateway_names_it_and_paid_at_its_path() {
        for kind in PaymentKind::ALL {
            assert_eq!(PaymentKind::parse(kind.as_str()), Some(kind));
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
            assert_eq!(kind.path().starts_with("/v2/transfer/"), kind.is_transfer(), "{kind:?}");
        }
        assert_eq!(PaymentKind::Ted.path(), "/v2/transfer/ted");
        assert_eq!(PaymentKind::Tax.path(), "/v2/payment/taxes");
    }

    #[test]
    fn a_transfer_event_is_a_ted_when_it_says_so_else_a_pix_transfer() {
        let transfer = |kind: &str| Event {
            id: 1,
            code: "transfer.db.updated".into(),
            data: serde_json::json!({"uid": "u", "kind": kind, "amount": 1.0, "status": "pending",
                "financial_account_uid": "a", "created_at": "2026-12-01T00:00:00Z", "updated_at": "2026-12-01T00:00:00Z",
                "target": {"transfer_kind": kind, "beneficiary": {"name": "Kobana", "document_number": "80815210000096"}}}),
            occurred_at: None,
        };
        let kind_of = |event: Event| match event.subject().unwrap() {
            Some(Subject::Payment(payment)) => (payment.kind, payment.payee().name),
            other => panic!("{other:?}"),
        };
        assert_eq!(kind_of(transfer("ted")), (PaymentKind::Ted, Some("Kobana".into())));
        assert_eq!(kind_of(transfer("pix")).0, PaymentKind::PixTransfer);
    }

    #[test]
    fn the_secret_names_both_values() {
        let c = parse_secret(r#"{"api_token":"t","webhook_secret":"w"}"#).unwrap();
        assert_eq!((c.api_token.as_str(), c.webhook_secret.as_str()), ("t", "w"));
        assert!(parse_secret(r#"{"api_token":"t"}"#).is_err());
        assert_eq!(format!("{c:?}"), "Credentials { .. }");
    }
}
