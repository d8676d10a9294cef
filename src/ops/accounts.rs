//! Financial accounts (`/v1/financial-accounts`, scope `finance.accounts`): bank, cash,
//! investment and credit accounts of a company, and their balance.
//!
//! Rules: the balance is never stored — it is the opening balance (`balance` on create,
//! never updatable) plus the realised credits minus the realised debits of the account
//! (pending transactions do not count); only the detail answers (get, create, update,
//! adjust) carry it, never the list. The bank is one of the bank list (`/v1/banks`), named
//! on a write by `bank_id` or by its COMPE code (`bank_code`), and answered as `bank_id`
//! and `bank {code, name}` (the list's, as it is now). An account
//! that transactions, payables or receivables use cannot be deleted (422 `in_use` with
//! the usage; deactivate it instead), and the `finance` role may not delete accounts.
//! Adjusting the balance records one auto-created transaction for the difference.

use crate::ops::machinery::stamps::Stamp;
use crate::ops::machinery::stamps::Stamps;
use crate::storage::{sql, Conn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::ledger::{self, NewTransaction};
use super::machinery::common::{audit_write, body_id, optional, path_id, required, required_if_sent};
use super::machinery::crud::{self, record_table};
use super::machinery::list::ListRequest;
use super::machinery::list::{list_spec, ListSpec};
use super::machinery::refs::{self, Polarity};
use super::machinery::resource::{
    parse, peek, reply, Asking, Call, Declaration, Deletable, Op, Question, Records, Running, Writable,
};
use super::machinery::validate::{nullable, schema_of};
use super::OpContext;
use super::Page;
use crate::domain::dates::{Date, Timestamp};
use crate::domain::money::{Cents, SignedAmount};
use crate::domain::roles::{Access, Resource};
use crate::domain::text::quoted;
use crate::error::{ApiError, ErrorCode};
use crate::storage::db_error;
use crate::storage::identity::Membership;

/// The kind of an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AccountType {
    Checking,
    Savings,
    Cash,
    Investment,
    Credit,
}

impl AccountType {
    pub fn as_str(self) -> &'static str {
        match self {
            AccountType::Checking => "checking",
            AccountType::Savings => "savings",
            AccountType::Cash => "cash",
            AccountType::Investment => "investment",
            AccountType::Credit => "credit",
        }
    }
}

/// `POST /v1/financial-accounts`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountCreate {
    pub company_id: String,
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: String,
    #[serde(rename = "type")]
    pub account_type: AccountType,
    /// The bank, a bank of the bank list (GET /v1/banks); or bank_code.
    #[serde(default)]
    pub bank_id: Option<String>,
    /// The bank by its COMPE code, 3 digits with leading zeros (e.g. "001", "341"); or
    /// bank_id.
    #[serde(default)]
    #[schemars(length(min = 3, max = 3))]
    pub bank_code: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 50))]
    pub agency: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 5))]
    pub agency_digit: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 50))]
    pub account_number: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 5))]
    pub account_digit: Option<String>,
    /// Opening balance, signed, e.g. "1500.00" or "-20.00" (default "0.00"). Cannot be
    /// changed later: use adjust-balance.
    #[serde(default)]
    pub balance: Option<SignedAmount>,
    #[serde(default)]
    pub disable_reconcile: Option<bool>,
}

/// `PATCH /v1/financial-accounts/{id}`: only the fields sent change; `null` clears an
/// optional field. The company and the opening balance cannot change.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AccountUpdate {
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub account_type: Option<AccountType>,
    /// The bank, a bank of the bank list; null: none.
    #[serde(deserialize_with = "nullable")]
    pub bank_id: Option<Option<String>>,
    /// The bank by its COMPE code; null: none.
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(min = 3, max = 3))]
    pub bank_code: Option<Option<String>>,
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
    pub active: Option<bool>,
    pub disable_reconcile: Option<bool>,
}

/// `POST /v1/financial-accounts/{id}/adjust-balance`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdjustBalance {
    /// The balance the account should have, signed, e.g. "1250.00".
    pub target_balance: SignedAmount,
    /// A category of the account's company: of type credit when the balance goes up,
    /// debit when it goes down.
    pub category_id: String,
    /// YYYY-MM-DD (default: today, UTC).
    #[serde(default)]
    pub occurred_at: Option<Date>,
    /// Default "Ajuste de saldo".
    #[serde(default)]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 500))]
    pub description: Option<String>,
}

/// An account as the list returns it (no balance).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Account {
    pub id: String,
    pub company_id: String,
    pub name: String,
    #[serde(rename = "type")]
    #[schemars(with = "AccountType")]
    pub account_type: String,
    pub bank_id: Option<String>,
    /// The bank's COMPE code and name, as the bank list has them now.
    pub bank: Option<AccountBank>,
    pub agency: Option<String>,
    pub agency_digit: Option<String>,
    pub account_number: Option<String>,
    pub account_digit: Option<String>,
    pub active: bool,
    pub disable_reconcile: bool,
    #[serde(flatten)]
    pub stamps: Stamps,
}

/// An account's bank as its rows show it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AccountBank {
    /// The COMPE code, 3 digits.
    pub code: String,
    pub name: String,
}

impl AccountBank {
    /// The bank of a row that names one (`bank_code`, `bank_name` read from the list).
    fn of(row: &crate::storage::Row<'_>) -> Result<Option<AccountBank>, crate::storage::Error> {
        let name: Option<String> = row.try_get("bank_name")?;
        let code: Option<String> = row.try_get("bank_code")?;
        Ok(name.map(|name| AccountBank { code: code.unwrap_or_default(), name }))
    }
}

impl Account {
    /// The COMPE code of its bank.
    pub fn bank_code(&self) -> Option<&str> {
        self.bank.as_ref().map(|b| b.code.as_str()).filter(|c| !c.is_empty())
    }
}

/// An account with its balance (get, create, update).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AccountDetail {
    #[serde(flatten)]
    pub account: Account,
    /// Opening balance + realised credits − realised debits, signed, e.g. "-12.50".
    #[schemars(with = "String")]
    pub balance: Cents,
}

/// The answer of adjust-balance (money as signed 2-decimal strings).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BalanceAdjustment {
    /// The auto-created transaction.
    pub transaction_id: String,
    /// new − previous.
    #[schemars(with = "String")]
    pub difference: Cents,
    #[schemars(with = "String")]
    pub previous_balance: Cents,
    #[schemars(with = "String")]
    pub new_balance: Cents,
}

/// What keeps an account from being deleted.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Usage {
    pub transactions: i64,
    pub payables: i64,
    pub receivables: i64,
}

/// The `"/v1/financial-accounts"` resource: its list, its reads, writes and delete.
pub struct Accounts;

impl Records for Accounts {
    const LIST: &'static ListSpec = &LIST;
    const RESOURCE: Resource = Resource::Accounts;
    const COLLECTION: &'static str = "/v1/financial-accounts";
    const NOUN: &'static str = "account";
    type Row = Account;
    type Record = AccountDetail;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Account>, ApiError> {
        crud::list::<Self>(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<AccountDetail, ApiError> {
        get(ctx, conn, ws, id).await
    }
    fn label(a: &AccountDetail) -> String {
        format!("{} (balance {})", quoted(&a.account.name), a.balance.brl())
    }
}

impl Writable for Accounts {
    type Create = AccountCreate;
    type Created = AccountDetail;
    type Update = AccountUpdate;
    async fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: AccountCreate,
    ) -> Result<AccountDetail, ApiError> {
        ctx.authorize(ws, Resource::Accounts, Access::Write)?;
        let name = required("name", &input.name)?;
        let bank_id = refs::bank(conn, input.bank_id.as_deref(), input.bank_code.as_deref(), None).await?;
        let opening = input.balance.map_or(Cents(0), SignedAmount::cents);
        let company = refs::company(conn, ws, "company_id", &input.company_id).await?;
        let id = uuid::Uuid::new_v4().to_string();
        let now = Timestamp::now();
        sql::query(
            "INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, bank_id, agency, agency_digit,
                                             account_number, account_digit, active, disable_reconcile, opening_balance_cents,
                                             created_at, updated_at, created_via, updated_via, created_by, updated_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, $11, $12, $13, $13, $14, $14, $15, $15)",
        )
        .bind(&id)
        .bind(&ws.workspace_id)
        .bind(&company.id)
        .bind(name)
        .bind(input.account_type.as_str())
        .bind(bank_id.as_deref())
        .bind(optional(input.agency.as_deref()))
        .bind(optional(input.agency_digit.as_deref()))
        .bind(optional(input.account_number.as_deref()))
        .bind(optional(input.account_digit.as_deref()))
        .bind(input.disable_reconcile.unwrap_or(false) as i64)
        .bind(opening.0)
        .stamp(ctx, &now)
        .execute(&mut *conn)
        .await
        ?;
        crud::audit::<Accounts>(ctx, conn, ws, "create", &id).await?;
        detail(conn, ws, &id).await
    }
    async fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: AccountUpdate,
    ) -> Result<AccountDetail, ApiError> {
        ctx.authorize(ws, Resource::Accounts, Access::Write)?;
        let current = find(conn, ws, id).await?;
        let name = required_if_sent("name", input.name.as_deref())?;
        // A bank sent (by id or code) replaces the account's; null for either clears it.
        let bank_id = match (&input.bank_id, &input.bank_code) {
            (None, None) => current.bank_id.clone(),
            (id, code) => {
                let (id, code) = (id.clone().flatten(), code.clone().flatten());
                refs::bank(
                    conn,
                    optional(id.as_deref()).as_deref(),
                    optional(code.as_deref()).as_deref(),
                    current.bank_id.as_deref(),
                )
                .await?
            }
        };
        let name = name.unwrap_or(&current.name).to_string();
        let account_type = input.account_type.map(|t| t.as_str().to_string()).unwrap_or(current.account_type);
        let pick = |sent: Option<Option<String>>, kept: Option<String>| match sent {
            Some(value) => optional(value.as_deref()),
            None => kept,
        };
        let agency = pick(input.agency, current.agency);
        let agency_digit = pick(input.agency_digit, current.agency_digit);
        let account_number = pick(input.account_number, current.account_number);
        let account_digit = pick(input.account_digit, current.account_digit);
        let active = input.active.unwrap_or(current.active);
        let disable_reconcile = input.disable_reconcile.unwrap_or(current.disable_reconcile);
        let update = sql::query(
            "UPDATE financial_accounts SET name = $1, account_type = $2, bank_id = $3, agency = $4, agency_digit = $5,
                    account_number = $6, account_digit = $7, active = $8, disable_reconcile = $9, updated_at = $10,
                    updated_via = $11, updated_by = $12
              WHERE workspace_id = $13 AND id = $14",
        )
        .bind(&name)
        .bind(&account_type)
        .bind(bank_id.as_deref())
        .bind(agency.as_deref())
        .bind(agency_digit.as_deref())
        .bind(account_number.as_deref())
        .bind(account_digit.as_deref())
        .bind(active as i64)
        .bind(disable_reconcile as i64);
        crud::stamped_update::<Accounts>(ctx, conn, ws, update, &current.id, db_error).await?;
        detail(conn, ws, &current.id).await
    }
}

impl Deletable for Accounts {
    /// Deletes an account nothing uses; otherwise 422 `in_use` with the usage (deactivate
    /// it with `active: false` instead).
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        ctx.authorize(ws, Resource::Accounts, Access::Delete)?;
        let current = find(conn, ws, id).await?;
        let usage = usage(conn, ws, &current.id).await?;
        if usage.transactions + usage.payables + usage.receivables > 0 {
            return Err(ApiError::new(
                ErrorCode::UnprocessableEntity,
                "The financial account is in use; deactivate it instead",
            )
            .with_details(json!({ "reason": "in_use", "usage": usage })));
        }
        crud::deleted::<Accounts>(ctx, conn, ws, &current.id, db_error).await
    }
}

/// The `/v1/financial-accounts` operations.
fn run_adjust_balance(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(adjust_balance(c.ctx, c.conn, c.ws, c.id, parse(c.body)?).await?) })
}

/// "Set the balance of the account … from R$ … to R$ …?": the account's balance as it is
/// (a movement posted meanwhile asks again), the movement recorded and its day.
fn confirm_adjust_balance(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, id, body, .. } = c;
        let input: AdjustBalance = parse(body)?;
        let target = input.target_balance.cents();
        let occurred_at = input.occurred_at.unwrap_or_else(Date::today);
        let account = peek::<Accounts>(ctx, conn, ws, id).await?;
        let question = Question::binding().binds(&account);
        let Some(account) = account else {
            return Ok(question.asks(format!(
                "Set the balance of the account {id} to {} with a transaction dated {occurred_at}?",
                target.brl()
            )));
        };
        let company = refs::company(conn, ws, "company_id", &account.account.company_id).await?;
        refs::check_period(&company, "occurred_at", occurred_at)?;
        let difference = difference(account.balance, target)?;
        let movement = if difference.0 >= 0 { "credit" } else { "debit" };
        Ok(question.asks(format!(
            "Set the balance of the account {} from {} to {}? This records a {movement} of {} dated {occurred_at}.",
            quoted(&account.account.name),
            account.balance.brl(),
            target.brl(),
            Cents(difference.0.abs()).brl(),
        )))
    })
}

/// What an adjustment from `previous` to `target` records: their difference, never zero
/// (422 `no_change`).
fn difference(previous: Cents, target: Cents) -> Result<Cents, ApiError> {
    let difference = target.0.checked_sub(previous.0).ok_or_else(|| {
        ApiError::new(ErrorCode::UnprocessableEntity, "The adjustment is out of range")
            .with_details(json!({ "field": "target_balance", "reason": "out_of_range" }))
    })?;
    if difference == 0 {
        return Err(ApiError::new(ErrorCode::UnprocessableEntity, "The account already has this balance")
            .with_details(json!({ "field": "target_balance", "reason": "no_change" })));
    }
    Ok(Cents(difference))
}

pub static OPERATIONS: Declaration = Declaration::of::<Accounts>(&[
    Op::list::<Accounts>("List financial accounts (without balance)").tool(
        "finance_accounts_list",
        "List financial accounts",
        "Lists the financial accounts (bank, cash, card, investment), without balances: finance_accounts_get has the \
balance.",
    ),
    Op::get::<Accounts>("Get a financial account with its balance").tool(
        "finance_accounts_get",
        "Get a financial account",
        "One financial account with its balance: opening plus realised credits minus debits.",
    ),
    Op::create::<Accounts>("Create a financial account").tool(
        "finance_accounts_create",
        "Create a financial account",
        "Creates a financial account of a company, with an optional opening balance.",
    ),
    Op::update::<Accounts>("Update a financial account").tool(
        "finance_accounts_update",
        "Update a financial account",
        "Changes the fields sent. The balance moves only through transactions or finance_accounts_adjust_balance.",
    ),
    Op::delete::<Accounts>("Delete an unused financial account").tool(
        "finance_accounts_delete",
        "Delete a financial account",
        "Deletes an account nothing uses (else the error lists what does; deactivate it instead). Asks the user to \
confirm.",
    ),
    Op::write(
        "post",
        "/{id}/adjust-balance",
        "adjust_balance",
        "Adjust the balance with one auto-created transaction",
        run_adjust_balance,
    )
    .takes::<AdjustBalance>()
    .answers(201, schema_of::<BalanceAdjustment>)
    .located("/v1/financial-transactions", "transaction_id")
        .tool(
            "finance_accounts_adjust_balance",
            "Adjust an account's balance",
            "Brings the balance to target_balance with one transaction for the difference (credit up, debit down), e.g. to \
match a bank statement. Asks the user to confirm.",
        )
        .confirmed(confirm_adjust_balance),
    Op::write(
        "post",
        "/{id}/statement-imports",
        "import_statement",
        "Import a bank statement (OFX or CSV) as the account's transactions",
        super::statement_imports::run_import,
    )
    .takes::<super::statement_imports::StatementImportRequest>()
    .answers(200, schema_of::<super::statement_imports::StatementImport>)
    .extension("statement imports: the real product imports statements in its web app only")
    .tool(
        "finance_accounts_import_statement",
        "Import a bank statement",
        "Turns an uploaded OFX or CSV statement (finance_attachments_upload) into the account's posted transactions, \
one per movement; movements already imported are skipped, so a file imported twice creates nothing. Automatic rules \
fill each row. Answers the counts and the refused lines with their numbers.",
    ),
]);

pub static LIST: ListSpec = list_spec!(financial_accounts;
    filters: company_id: Uuid, type = account_type: Enum(&["checking", "savings", "cash", "investment", "credit"]),
        bank_id: Uuid, bank_code = "(SELECT banks.code FROM banks WHERE banks.id = financial_accounts.bank_id)": Text
        @ "bank by COMPE code", active: Bool, name: Text, created_at: Timestamp @ "creation time";
    sorts: name, created_at, type = account_type;
    default: name);

/// The description of a balance adjustment when none is given.
pub const ADJUSTMENT_DESCRIPTION: &str = "Ajuste de saldo";

record_table!(impl Table for Accounts as "Financial account", audited as "financial_account"; financial_accounts => Account |row| {
    id, company_id, name, account_type, bank_id, agency, agency_digit, account_number, account_digit, active, disable_reconcile;
    bank = AccountBank::of(row)?;
    selects bank_code = "(SELECT banks.code FROM banks WHERE banks.id = financial_accounts.bank_id)",
        bank_name = "(SELECT banks.name FROM banks WHERE banks.id = financial_accounts.bank_id)"
});

/// The account `id` of the workspace (404 otherwise, also for a malformed id).
/// The account `id` as a question names it where money leaves or enters it: its name, read
/// without its balance and bound to `question` (what the question depends on is the
/// account, not every movement in it — and a balance is a sum over all of them); its id
/// when the caller may not read accounts.
pub async fn named(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    question: &mut Question,
) -> Result<String, ApiError> {
    let account = match ctx.authorize(ws, Resource::Accounts, Access::Read) {
        Ok(()) => Some(find(conn, ws, id).await?),
        Err(e) if matches!(e.code, ErrorCode::InsufficientScope | ErrorCode::Forbidden) => None,
        Err(e) => return Err(e),
    };
    question.bind(&account);
    Ok(account.map_or_else(|| id.to_string(), |account| quoted(&account.name)))
}

pub(crate) async fn find(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Account, ApiError> {
    crud::find::<Accounts>(conn, ws, id).await
}

async fn detail(conn: &mut Conn, ws: &Membership, id: &str) -> Result<AccountDetail, ApiError> {
    let account = find(conn, ws, id).await?;
    let balance = ledger::balance(conn, ws, &account.id).await?;
    Ok(AccountDetail { account, balance })
}

pub async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<AccountDetail, ApiError> {
    ctx.authorize(ws, Resource::Accounts, Access::Read)?;
    detail(conn, ws, id).await
}

/// How many transactions, payables and receivables use the account (as the account of
/// a movement or settlement, or as a bill's expected account).
async fn usage(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Usage, ApiError> {
    let row = sql::query(
        "SELECT (SELECT COUNT(*) FROM financial_transactions WHERE workspace_id = $1 AND financial_account_id = $2),
                (SELECT COUNT(*) FROM billings WHERE workspace_id = $1 AND kind = 'payable'
                    AND (financial_account_id = $2 OR expected_account_id = $2)),
                (SELECT COUNT(*) FROM billings WHERE workspace_id = $1 AND kind = 'receivable'
                    AND (financial_account_id = $2 OR expected_account_id = $2))",
    )
    .bind(&ws.workspace_id)
    .bind(id)
    .fetch_one(&mut *conn)
    .await?;
    Ok(Usage { transactions: row.try_get(0)?, payables: row.try_get(1)?, receivables: row.try_get(2)? })
}

/// Brings the balance to `target_balance` with one auto-created transaction for the
/// difference (credit when it goes up, debit when it goes down), dated `occurred_at`
/// and subject to the company's closed period. 422 `no_change` when the balance is
/// already the target.
pub async fn adjust_balance(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    input: AdjustBalance,
) -> Result<BalanceAdjustment, ApiError> {
    ctx.authorize(ws, Resource::Accounts, Access::Write)?;
    // Read-modify-write of the balance: lock the account row first, so concurrent
    // adjustments of one account run one after the other and each sees the balance the
    // previous one left (a row lock on PostgreSQL; the write lock, taken before any
    // read, on SQLite).
    let id = path_id(id, "Financial account")?;
    sql::query("UPDATE financial_accounts SET updated_at = updated_at WHERE workspace_id = $1 AND id = $2")
        .bind(&ws.workspace_id)
        .bind(&id)
        .execute(&mut *conn)
        .await?;
    let account = find(conn, ws, &id).await?;
    let target = input.target_balance.cents();
    let category_id = body_id("category_id", &input.category_id)?;
    let occurred_at = input.occurred_at.unwrap_or_else(Date::today);
    let description =
        required_if_sent("description", input.description.as_deref())?.unwrap_or(ADJUSTMENT_DESCRIPTION).to_string();
    let company = refs::company(conn, ws, "company_id", &account.company_id).await?;
    refs::check_period(&company, "occurred_at", occurred_at)?;
    let previous = ledger::balance(conn, ws, &account.id).await?;
    let difference = difference(previous, target)?;
    let polarity = if difference.0 > 0 { Polarity::Credit } else { Polarity::Debit };
    let category = crate::ops::registers::Owner { ctx, ws, company: &company, polarity }
        .category(conn, Some(&category_id), None)
        .await?;
    let transaction_id = ledger::insert(
        ctx,
        conn,
        ws,
        &NewTransaction {
            company_id: company.id.clone(),
            account_id: account.id.clone(),
            description,
            amount: Cents(difference.0.abs()),
            occurred_at,
            polarity: Some(polarity),
            category_id: category,
            auto_created: true,
            ..NewTransaction::default()
        },
    )
    .await?;
    audit_write(ctx, conn, ws, "financial_accounts.adjust_balance", "financial_account", &account.id).await?;
    audit_write(ctx, conn, ws, "financial_transactions.create", "financial_transaction", &transaction_id).await?;
    let new_balance = ledger::balance(conn, ws, &account.id).await?;
    Ok(BalanceAdjustment { transaction_id, difference, previous_balance: previous, new_balance })
}
