//! Automatic rules (`/v1/automatic-rules`, scope `finance.automatic_rules`): what a
//! finance team does by hand to every new row — "anything from Uber goes to Travel",
//! "the landlord's bills land in the checking account" — written down once per company.
//!
//! A rule has a scope (`transactions` or `billings`, fixed at creation), a position
//! (1-based, unique per company and scope; a create appends, a delete leaves a gap, a
//! reorder renumbers), criteria (`account_id` for transactions only, `transaction_type`,
//! `match_person_id`, `description_contains`, `notes_contains`; `""` is a wildcard) and
//! actions (`set_description`, `set_person_id`, `set_category_id`,
//! `set_classification_center_id`, `set_expected_account_id` for billings only); at
//! least one of each.
//!
//! **Firing** ([`fire`]): every freshly created transaction or bill, whatever the door
//! (REST, MCP, a statement import, each record of an installment series), asks for the
//! first active rule of its company and scope, in position order, whose criteria all
//! match it; that rule's actions fill the fields the request left empty — a field the
//! request set is never overwritten. An action whose record no longer fits the row (a
//! person deleted, a category of the other direction, an inactive center) is skipped:
//! a rule never makes a create fail. A bill's direction is its kind (payables are
//! `debit`, receivables `credit`). Text criteria match case-insensitively.

use crate::domain::text::quoted;
use std::collections::BTreeSet;

mod overlap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::machinery::common::{body_id, conflict_on_unique, unprocessable};
use super::machinery::crud::{self, record_table};
use super::machinery::list::{list_spec, ListRequest, ListSpec};
use super::machinery::refs::{self, CompanyRef, Polarity};
use super::machinery::resource::{parse, reply, Call, Declaration, Deletable, Op, Records, Running, Writable};
use super::machinery::stamps::{Stamp, Stamps};
use super::machinery::validate::{nullable, schema_of};
use super::registers::Owner;
use super::transactions::wire::TransactionType;
use super::{OpContext, Page};
use crate::domain::dates::Timestamp;
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::storage::identity::Membership;
use crate::storage::row::decode_text;
use crate::storage::{db_error, sql, Conn};

/// Which rows a rule fires on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RuleScope {
    Transactions,
    Billings,
}

impl RuleScope {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleScope::Transactions => "transactions",
            RuleScope::Billings => "billings",
        }
    }

    fn parse(s: &str) -> Option<RuleScope> {
        match s {
            "transactions" => Some(RuleScope::Transactions),
            "billings" => Some(RuleScope::Billings),
            _ => None,
        }
    }
}

decode_text!(RuleScope, RuleScope::parse);

/// `POST /v1/automatic-rules`: appended after the company's last rule of its scope.
/// `null` is the same as absent.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutomaticRuleCreate {
    pub company_id: String,
    /// `transactions` or `billings`; immutable.
    pub scope: RuleScope,
    /// Default true.
    #[serde(default)]
    pub active: Option<bool>,
    /// Criterion (transactions only): the transaction's account.
    #[serde(default)]
    pub account_id: Option<String>,
    /// Criterion: the direction (a payable is a debit, a receivable a credit).
    #[serde(default)]
    pub transaction_type: Option<TransactionType>,
    /// Criterion: the row's person.
    #[serde(default)]
    pub match_person_id: Option<String>,
    /// Criterion: text in the description, any case; `""` matches every row.
    #[serde(default)]
    #[schemars(length(max = 255))]
    pub description_contains: Option<String>,
    /// Criterion: text in the notes, any case; `""` matches every row.
    #[serde(default)]
    #[schemars(length(max = 255))]
    pub notes_contains: Option<String>,
    /// Action: the description (only of rows whose request set none: imports).
    #[serde(default)]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 255))]
    pub set_description: Option<String>,
    #[serde(default)]
    pub set_person_id: Option<String>,
    #[serde(default)]
    pub set_category_id: Option<String>,
    /// Action: one classification center for the whole amount.
    #[serde(default)]
    pub set_classification_center_id: Option<String>,
    /// Action (billings only): the expected account.
    #[serde(default)]
    pub set_expected_account_id: Option<String>,
}

impl AutomaticRuleCreate {
    fn fields(self) -> RuleFields {
        RuleFields {
            account_id: self.account_id,
            transaction_type: self.transaction_type,
            match_person_id: self.match_person_id,
            description_contains: self.description_contains,
            notes_contains: self.notes_contains,
            set_description: self.set_description,
            set_person_id: self.set_person_id,
            set_category_id: self.set_category_id,
            set_classification_center_id: self.set_classification_center_id,
            set_expected_account_id: self.set_expected_account_id,
        }
    }
}

/// Binds a rule's ten criteria and actions, in their columns' order (`account_id` …
/// `set_expected_account_id`), to an insert or an update.
trait BindFields<'q> {
    fn fields(self, fields: &'q RuleFields) -> sql::Query<'q>;
}

impl<'q> BindFields<'q> for sql::Query<'q> {
    fn fields(self, f: &'q RuleFields) -> sql::Query<'q> {
        self.bind(f.account_id.as_deref())
            .bind(f.transaction_type.map(TransactionType::as_str))
            .bind(f.match_person_id.as_deref())
            .bind(f.description_contains.as_deref())
            .bind(f.notes_contains.as_deref())
            .bind(f.set_description.as_deref())
            .bind(f.set_person_id.as_deref())
            .bind(f.set_category_id.as_deref())
            .bind(f.set_classification_center_id.as_deref())
            .bind(f.set_expected_account_id.as_deref())
    }
}

/// A rule's criteria and actions.
#[derive(Debug, Default, Clone)]
struct RuleFields {
    account_id: Option<String>,
    transaction_type: Option<TransactionType>,
    match_person_id: Option<String>,
    description_contains: Option<String>,
    notes_contains: Option<String>,
    set_description: Option<String>,
    set_person_id: Option<String>,
    set_category_id: Option<String>,
    set_classification_center_id: Option<String>,
    set_expected_account_id: Option<String>,
}

/// `PATCH /v1/automatic-rules/{id}`: the fields sent change, `null` clears one; the
/// scope and company cannot change. The rule keeps at least one criterion and action.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AutomaticRuleUpdate {
    #[schemars(with = "bool")]
    pub active: Option<bool>,
    #[serde(deserialize_with = "nullable")]
    pub account_id: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub transaction_type: Option<Option<TransactionType>>,
    #[serde(deserialize_with = "nullable")]
    pub match_person_id: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 255))]
    pub description_contains: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 255))]
    pub notes_contains: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 255))]
    pub set_description: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub set_person_id: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub set_category_id: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub set_classification_center_id: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub set_expected_account_id: Option<Option<String>>,
}

/// An automatic rule as `/v1` returns it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AutomaticRule {
    pub id: String,
    pub company_id: String,
    pub scope: RuleScope,
    /// 1-based, per company and scope: the first active match wins.
    pub position: i64,
    pub active: bool,
    pub account_id: Option<String>,
    pub transaction_type: Option<TransactionType>,
    pub match_person_id: Option<String>,
    pub description_contains: Option<String>,
    pub notes_contains: Option<String>,
    pub set_description: Option<String>,
    pub set_person_id: Option<String>,
    pub set_category_id: Option<String>,
    pub set_classification_center_id: Option<String>,
    pub set_expected_account_id: Option<String>,
    #[serde(flatten)]
    pub stamps: Stamps,
}

impl AutomaticRule {
    fn fields(&self) -> RuleFields {
        RuleFields {
            account_id: self.account_id.clone(),
            transaction_type: self.transaction_type,
            match_person_id: self.match_person_id.clone(),
            description_contains: self.description_contains.clone(),
            notes_contains: self.notes_contains.clone(),
            set_description: self.set_description.clone(),
            set_person_id: self.set_person_id.clone(),
            set_category_id: self.set_category_id.clone(),
            set_classification_center_id: self.set_classification_center_id.clone(),
            set_expected_account_id: self.set_expected_account_id.clone(),
        }
    }
}

/// What a create answers: the rule, and the earlier rule that already fires first on
/// rows it matches, if one does.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AutomaticRuleCreated {
    #[serde(flatten)]
    pub rule: AutomaticRule,
    /// The first earlier active rule of the company and scope that can match the same
    /// rows: it fires on them first (`every_row`: on every row this one matches).
    /// Absent when none does: the answer is then the rule as a get reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kobana-extension" = "the earlier rule that fires first on the same rows"))]
    pub overlapped_by: Option<overlap::Overlap>,
}

/// `POST /v1/automatic-rules/reorder`: the complete set of the company's rules of the
/// scope, in their new order.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutomaticRuleReorder {
    pub company_id: String,
    pub scope: RuleScope,
    #[schemars(length(min = 1))]
    pub ordered_ids: Vec<String>,
}

/// What the reorder tool answers (`/v1` answers 204).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Reordered {
    pub company_id: String,
    pub scope: RuleScope,
    pub ordered_ids: Vec<String>,
}

/// The `/v1/automatic-rules` resource.
pub struct AutomaticRules;

impl Records for AutomaticRules {
    const LIST: &'static ListSpec = &LIST;
    const RESOURCE: Resource = Resource::AutomaticRules;
    const COLLECTION: &'static str = "/v1/automatic-rules";
    const NOUN: &'static str = "automatic rule";
    type Row = AutomaticRule;
    type Record = AutomaticRule;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<AutomaticRule>, ApiError> {
        crud::list::<Self>(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<AutomaticRule, ApiError> {
        crud::get::<Self>(ctx, conn, ws, id).await
    }
    fn label(rule: &AutomaticRule) -> String {
        let what = match &rule.description_contains {
            Some(text) if !text.is_empty() => format!(" (description contains {})", quoted(text)),
            _ => String::new(),
        };
        let scope = rule.scope.as_str().trim_end_matches('s');
        format!("#{} of the {scope} rules{what}", rule.position)
    }
}

impl Writable for AutomaticRules {
    type Create = AutomaticRuleCreate;
    type Created = AutomaticRuleCreated;
    type Update = AutomaticRuleUpdate;
    async fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: AutomaticRuleCreate,
    ) -> Result<AutomaticRuleCreated, ApiError> {
        ctx.authorize(ws, Resource::AutomaticRules, Access::Write)?;
        let company = refs::company(conn, ws, "company_id", &input.company_id).await?;
        let (scope, active) = (input.scope, input.active.unwrap_or(true));
        let fields = checked(conn, ws, &company, scope, input.fields(), &|_| true).await?;
        let position: i64 = sql::query(
            "SELECT COALESCE(MAX(position), 0) + 1 FROM automatic_rules WHERE workspace_id = $1 AND company_id = $2 AND scope = $3",
        )
        .bind(&ws.workspace_id)
        .bind(&company.id)
        .bind(scope.as_str())
        .fetch_one(&mut *conn)
        .await
        .and_then(|row| row.try_get(0))?;
        let id = uuid::Uuid::new_v4().to_string();
        let now = Timestamp::now();
        sql::query(
            "INSERT INTO automatic_rules (id, workspace_id, company_id, scope, position, active, account_id, transaction_type,
                                          match_person_id, description_contains, notes_contains, set_description, set_person_id,
                                          set_category_id, set_classification_center_id, set_expected_account_id,
                                          created_at, updated_at, created_via, updated_via, created_by, updated_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17, $18, $18, $19, $19)",
        )
        .bind(&id)
        .bind(&ws.workspace_id)
        .bind(&company.id)
        .bind(scope.as_str())
        .bind(position)
        .bind(i64::from(active))
        .fields(&fields)
        .stamp(ctx, &now)
        .execute(&mut *conn)
        .await
        // Two creates racing for the same last position: the second is told to retry.
        .map_err(|e| conflict_on_unique(e, "position", "Another rule took this position; retry"))?;
        let rule = crud::created::<AutomaticRules>(ctx, conn, ws, &id).await?;
        let earlier = Rules::of(conn, ws, &company, scope).await?;
        let overlapped_by = overlap::first(&earlier.0, &rule);
        Ok(AutomaticRuleCreated { rule, overlapped_by })
    }
    async fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: AutomaticRuleUpdate,
    ) -> Result<AutomaticRule, ApiError> {
        ctx.authorize(ws, Resource::AutomaticRules, Access::Write)?;
        let current = crud::find::<AutomaticRules>(conn, ws, id).await?;
        let company = refs::company(conn, ws, "company_id", &current.company_id).await?;
        // The records the update names are checked; those the rule kept are not (a rule
        // whose person was deleted since can still be paused or changed). A new type
        // re-checks the category and center against it.
        let typed = input.transaction_type.is_some();
        let sent: Vec<&str> = [
            ("account_id", input.account_id.is_some()),
            ("match_person_id", input.match_person_id.is_some()),
            ("set_person_id", input.set_person_id.is_some()),
            ("set_category_id", input.set_category_id.is_some() || typed),
            ("set_classification_center_id", input.set_classification_center_id.is_some() || typed),
            ("set_expected_account_id", input.set_expected_account_id.is_some()),
        ]
        .into_iter()
        .filter_map(|(field, sent)| sent.then_some(field))
        .collect();
        let mut fields = current.fields();
        let merge = |slot: &mut Option<String>, sent: Option<Option<String>>| {
            if let Some(value) = sent {
                *slot = value;
            }
        };
        merge(&mut fields.account_id, input.account_id);
        if let Some(t) = input.transaction_type {
            fields.transaction_type = t;
        }
        merge(&mut fields.match_person_id, input.match_person_id);
        merge(&mut fields.description_contains, input.description_contains);
        merge(&mut fields.notes_contains, input.notes_contains);
        merge(&mut fields.set_description, input.set_description);
        merge(&mut fields.set_person_id, input.set_person_id);
        merge(&mut fields.set_category_id, input.set_category_id);
        merge(&mut fields.set_classification_center_id, input.set_classification_center_id);
        merge(&mut fields.set_expected_account_id, input.set_expected_account_id);
        let fields = checked(conn, ws, &company, current.scope, fields, &|field| sent.contains(&field)).await?;
        let active = input.active.unwrap_or(current.active);
        let update = sql::query(
            "UPDATE automatic_rules SET active = $1, account_id = $2, transaction_type = $3, match_person_id = $4,
                    description_contains = $5, notes_contains = $6, set_description = $7, set_person_id = $8,
                    set_category_id = $9, set_classification_center_id = $10, set_expected_account_id = $11,
                    updated_at = $12, updated_via = $13, updated_by = $14
              WHERE workspace_id = $15 AND id = $16",
        )
        .bind(i64::from(active))
        .fields(&fields);
        crud::stamped_update::<AutomaticRules>(ctx, conn, ws, update, &current.id, db_error).await?;
        crud::find::<AutomaticRules>(conn, ws, &current.id).await
    }
}

impl Deletable for AutomaticRules {
    /// Deletes a rule; the others keep their positions (a gap is left).
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        ctx.authorize(ws, Resource::AutomaticRules, Access::Delete)?;
        let current = crud::find::<AutomaticRules>(conn, ws, id).await?;
        crud::deleted::<AutomaticRules>(ctx, conn, ws, &current.id, db_error).await
    }
}

/// A rule's criteria and actions as they are stored: trimmed texts (a criterion's `""`
/// kept: it is the wildcard; an action's blank text is none), each field allowed in the
/// scope, at least one criterion and one action, and the ids of the fields `check` names
/// canonical and of the company.
async fn checked(
    conn: &mut Conn,
    ws: &Membership,
    company: &CompanyRef,
    scope: RuleScope,
    mut fields: RuleFields,
    check: &(dyn Fn(&str) -> bool + Sync),
) -> Result<RuleFields, ApiError> {
    let criterion = |text: Option<String>| text.map(|t| t.trim().to_string());
    fields.description_contains = criterion(fields.description_contains);
    fields.notes_contains = criterion(fields.notes_contains);
    fields.set_description = super::machinery::common::optional(fields.set_description.as_deref());
    match scope {
        RuleScope::Billings if fields.account_id.is_some() => {
            return Err(unprocessable(
                "account_id",
                "transactions_only",
                "account_id is a criterion of transaction rules",
            ));
        }
        RuleScope::Transactions if fields.set_expected_account_id.is_some() => {
            return Err(unprocessable(
                "set_expected_account_id",
                "billings_only",
                "set_expected_account_id is an action of billing rules",
            ));
        }
        _ => {}
    }
    let has_criterion = fields.account_id.is_some()
        || fields.transaction_type.is_some()
        || fields.match_person_id.is_some()
        || fields.description_contains.is_some()
        || fields.notes_contains.is_some();
    if !has_criterion {
        return Err(unprocessable(
            "criteria",
            "criterion_required",
            "A rule needs at least one criterion: account_id, transaction_type, match_person_id, description_contains or notes_contains",
        ));
    }
    let has_action = fields.set_description.is_some()
        || fields.set_person_id.is_some()
        || fields.set_category_id.is_some()
        || fields.set_classification_center_id.is_some()
        || fields.set_expected_account_id.is_some();
    if !has_action {
        return Err(unprocessable(
            "actions",
            "action_required",
            "A rule needs at least one action: set_description, set_person_id, set_category_id, \
set_classification_center_id or set_expected_account_id",
        ));
    }
    for (field, slot) in
        [("account_id", &mut fields.account_id), ("set_expected_account_id", &mut fields.set_expected_account_id)]
    {
        if let Some(id) = slot.as_deref().filter(|_| check(field)) {
            *slot = Some(refs::account(conn, ws, company, field, id).await?);
        }
    }
    for (field, slot) in
        [("match_person_id", &mut fields.match_person_id), ("set_person_id", &mut fields.set_person_id)]
    {
        if let Some(id) = slot.as_deref().filter(|_| check(field)) {
            *slot = Some(refs::person(conn, ws, company, field, id).await?);
        }
    }
    // A category or center of the other direction than the rule's type would never fit.
    let types: &[&str] = match fields.transaction_type {
        Some(t) => &[t.as_str()],
        None => &["debit", "credit"],
    };
    if let Some(id) = fields.set_category_id.as_deref().filter(|_| check("set_category_id")) {
        fields.set_category_id = Some(refs::category(conn, ws, company, "set_category_id", id, types).await?);
    }
    if let Some(id) = fields.set_classification_center_id.as_deref().filter(|_| check("set_classification_center_id")) {
        let center = match fields.transaction_type {
            Some(t) => refs::center(conn, ws, company, t.polarity(), "set_classification_center_id", id).await?,
            None => refs::any_center(conn, ws, company, "set_classification_center_id", id).await?,
        };
        fields.set_classification_center_id = Some(center);
    }
    Ok(fields)
}

/// Renumbers the company's rules of a scope in the order given: the complete set of its
/// rule ids, each once (422 `incomplete_set` naming what is missing or foreign).
pub async fn reorder(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    input: AutomaticRuleReorder,
) -> Result<Reordered, ApiError> {
    ctx.authorize(ws, Resource::AutomaticRules, Access::Write)?;
    let company = refs::company(conn, ws, "company_id", &input.company_id).await?;
    // Sets, not scans: a body may name many ids.
    let mut ordered = Vec::with_capacity(input.ordered_ids.len());
    let mut named = BTreeSet::new();
    for (i, id) in input.ordered_ids.iter().enumerate() {
        let id = body_id(&format!("ordered_ids[{i}]"), id)?;
        if !named.insert(id.clone()) {
            return Err(unprocessable(&format!("ordered_ids[{i}]"), "duplicate", "Each rule is named once"));
        }
        ordered.push(id);
    }
    let existing: BTreeSet<String> =
        sql::query("SELECT id FROM automatic_rules WHERE workspace_id = $1 AND company_id = $2 AND scope = $3")
            .bind(&ws.workspace_id)
            .bind(&company.id)
            .bind(input.scope.as_str())
            .map_all(&mut *conn, |row| row.try_get::<String, _>(0))
            .await?
            .into_iter()
            .collect();
    let missing: Vec<&String> = existing.difference(&named).collect();
    let foreign: Vec<&String> = named.difference(&existing).collect();
    if !missing.is_empty() || !foreign.is_empty() {
        return Err(ApiError::new(
            ErrorCode::UnprocessableEntity,
            "ordered_ids must be the complete set of the company's rules of this scope",
        )
        .with_details(json!({
            "field": "ordered_ids", "reason": "incomplete_set", "missing": missing, "unknown": foreign,
        })));
    }
    // Out of the way first, past the highest position (positions are unique per company
    // and scope), then 1..n.
    let scope = input.scope.as_str();
    sql::query(
        "UPDATE automatic_rules SET position = position + (SELECT MAX(position) FROM automatic_rules
                 WHERE workspace_id = $1 AND company_id = $2 AND scope = $3)
          WHERE workspace_id = $1 AND company_id = $2 AND scope = $3",
    )
    .bind(&ws.workspace_id)
    .bind(&company.id)
    .bind(scope)
    .execute(&mut *conn)
    .await?;
    let now = Timestamp::now();
    for (position, id) in (1i64..).zip(&ordered) {
        sql::query(
            "UPDATE automatic_rules SET position = $1, updated_at = $2, updated_via = $3, updated_by = $4
              WHERE workspace_id = $5 AND id = $6",
        )
        .bind(position)
        .stamp(ctx, &now)
        .bind(&ws.workspace_id)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    }
    crud::audit::<AutomaticRules>(ctx, conn, ws, "reorder", &company.id).await?;
    Ok(Reordered { company_id: company.id, scope: input.scope, ordered_ids: ordered })
}

fn run_reorder(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(reorder(c.ctx, c.conn, c.ws, parse(c.body)?).await?) })
}

/// A freshly created row, as the rules see it.
#[derive(Debug, Clone, Copy)]
pub struct Fresh<'a> {
    pub scope: RuleScope,
    /// A transaction's account (billing rules have no account criterion).
    pub account_id: Option<&'a str>,
    pub polarity: Polarity,
    pub person_id: Option<&'a str>,
    pub description: &'a str,
    pub notes: Option<&'a str>,
}

/// What the first matching rule sets, each record checked to fit the row: the caller
/// fills with it only the fields its request left empty.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Fill {
    pub description: Option<String>,
    pub person_id: Option<String>,
    pub category_id: Option<String>,
    pub classification_center_id: Option<String>,
    pub expected_account_id: Option<String>,
}

/// A company's active rules of one scope, in position order: read once, then fired on
/// each fresh row ([`Rules::fire`]) — once per create, once per statement import.
pub struct Rules(Vec<AutomaticRule>);

impl Rules {
    /// The active rules of `company` in `scope`: one statement.
    pub async fn of(
        conn: &mut Conn,
        ws: &Membership,
        company: &CompanyRef,
        scope: RuleScope,
    ) -> Result<Rules, ApiError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM automatic_rules WHERE workspace_id = $1 AND company_id = $2 AND scope = $3 AND active = 1
              ORDER BY position"
        );
        let rules = sql::query(sql)
            .bind(&ws.workspace_id)
            .bind(&company.id)
            .bind(scope.as_str())
            .map_all(&mut *conn, from_row)
            .await?;
        Ok(Rules(rules))
    }

    /// The actions of the first rule whose criteria all match `row` ([`Fill`]); none
    /// matching gives nothing. Each action's record is checked against the row (its
    /// company and direction) and skipped when the check refuses it (422); any other
    /// failure (the database's) is the create's.
    pub async fn fire(&self, owner: &Owner<'_, '_>, conn: &mut Conn, row: Fresh<'_>) -> Result<Fill, ApiError> {
        let Some(rule) = self.0.iter().find(|rule| matches(rule, &row)) else { return Ok(Fill::default()) };
        let fits = |found: Result<Option<String>, ApiError>| match found {
            Err(e) if e.code == ErrorCode::UnprocessableEntity => Ok(None),
            other => other,
        };
        let mut fill = Fill { description: rule.set_description.clone(), ..Fill::default() };
        if let Some(id) = rule.set_person_id.as_deref() {
            fill.person_id = fits(owner.person(conn, Some(id), None).await)?;
        }
        if let Some(id) = rule.set_category_id.as_deref() {
            fill.category_id = fits(owner.category(conn, Some(id), None).await)?;
        }
        if let Some(id) = rule.set_classification_center_id.as_deref() {
            fill.classification_center_id = fits(owner.center(conn, Some(id), None).await)?;
        }
        if let Some(id) = rule.set_expected_account_id.as_deref() {
            let account = refs::account(conn, owner.ws, owner.company, "set_expected_account_id", id).await;
            fill.expected_account_id = fits(account.map(Some))?;
        }
        Ok(fill)
    }
}

/// Fires the company's rules on one fresh row (a create): [`Rules::of`], then
/// [`Rules::fire`].
pub async fn fire(owner: &Owner<'_, '_>, conn: &mut Conn, row: Fresh<'_>) -> Result<Fill, ApiError> {
    Rules::of(conn, owner.ws, owner.company, row.scope).await?.fire(owner, conn, row).await
}

/// Whether every criterion of `rule` holds for `row`.
fn matches(rule: &AutomaticRule, row: &Fresh<'_>) -> bool {
    let contains = |needle: &Option<String>, hay: Option<&str>| match needle.as_deref() {
        None | Some("") => true,
        Some(needle) => hay.is_some_and(|hay| hay.to_lowercase().contains(&needle.to_lowercase())),
    };
    rule.account_id.as_deref().is_none_or(|a| row.account_id == Some(a))
        && rule.transaction_type.is_none_or(|t| t.polarity() == row.polarity)
        && rule.match_person_id.as_deref().is_none_or(|p| row.person_id == Some(p))
        && contains(&rule.description_contains, Some(row.description))
        && contains(&rule.notes_contains, row.notes)
}

/// The `/v1/automatic-rules` operations.
pub static OPERATIONS: Declaration = Declaration::of::<AutomaticRules>(&[
    Op::list::<AutomaticRules>("List automatic rules").tool(
        "finance_automatic_rules_list",
        "List automatic rules",
        "Lists a company's automatic rules (criteria → actions) in position order: the first active match fills \
new rows' empty fields.",
    ),
    Op::get::<AutomaticRules>("Get an automatic rule").tool(
        "finance_automatic_rules_get",
        "Get an automatic rule",
        "One automatic rule.",
    ),
    Op::create::<AutomaticRules>("Create an automatic rule").tool(
        "finance_automatic_rules_create",
        "Create an automatic rule",
        "Adds a rule at the end of its company and scope (transactions or billings): at least one criterion \
(account_id, transaction_type, match_person_id, description_contains, notes_contains) and one action (set_*). \
It fills the empty fields of rows created afterwards; overlapped_by names an earlier rule that fires first on the same \
rows.",
    ),
    Op::update::<AutomaticRules>("Update an automatic rule").tool(
        "finance_automatic_rules_update",
        "Update an automatic rule",
        "Changes the fields sent (null clears one); active false pauses the rule. The scope cannot change.",
    ),
    Op::delete::<AutomaticRules>("Delete an automatic rule").tool(
        "finance_automatic_rules_delete",
        "Delete an automatic rule",
        "Deletes a rule; rows it already filled keep their fields. Asks the user to confirm.",
    ),
    Op::write("post", "/reorder", "reorder", "Reorder a company's automatic rules of a scope", run_reorder)
        .takes::<AutomaticRuleReorder>()
        .answers(204, schema_of::<Reordered>)
        .tool(
            "finance_automatic_rules_reorder",
            "Reorder automatic rules",
            "Sets the order of a company's rules of a scope: ordered_ids is the complete set of their ids, first \
to fire first.",
        ),
]);

pub static LIST: ListSpec = list_spec!(automatic_rules;
    filters: company_id: Uuid, scope: Enum(&["transactions", "billings"]), active: Bool;
    sorts: position, created_at;
    default: position);

record_table!(impl Table for AutomaticRules as "Automatic rule", audited as "automatic_rule"; automatic_rules => AutomaticRule |row| {
    id, company_id, scope, position, active, account_id, transaction_type, match_person_id, description_contains,
    notes_contains, set_description, set_person_id, set_category_id, set_classification_center_id, set_expected_account_id
});

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> AutomaticRule {
        AutomaticRule {
            id: "r".into(),
            company_id: "c".into(),
            scope: RuleScope::Transactions,
            position: 1,
            active: true,
            account_id: None,
            transaction_type: None,
            match_person_id: None,
            description_contains: None,
            notes_contains: None,
            set_description: None,
            set_person_id: None,
            set_category_id: Some("cat".into()),
            set_classification_center_id: None,
            set_expected_account_id: None,
            stamps: Stamps::default(),
        }
    }

    fn fresh<'a>(description: &'a str, notes: Option<&'a str>) -> Fresh<'a> {
        Fresh {
            scope: RuleScope::Transactions,
            account_id: Some("acc"),
            polarity: Polarity::Debit,
            person_id: Some("p"),
            description,
            notes,
        }
    }

    #[test]
    fn every_criterion_must_hold_and_text_matches_in_any_case() {
        let by_text = AutomaticRule { description_contains: Some("uber".into()), ..rule() };
        assert!(matches(&by_text, &fresh("UBER *TRIP 1234", None)));
        assert!(!matches(&by_text, &fresh("99 Táxi", None)));
        let wildcard = AutomaticRule { description_contains: Some(String::new()), ..rule() };
        assert!(matches(&wildcard, &fresh("anything", None)));
        let by_notes = AutomaticRule { notes_contains: Some("Reembolso".into()), ..rule() };
        assert!(matches(&by_notes, &fresh("x", Some("reembolso de viagem"))));
        assert!(!matches(&by_notes, &fresh("x", None)), "a notes criterion needs notes");
        let credit = AutomaticRule { transaction_type: Some(TransactionType::Credit), ..by_text.clone() };
        assert!(!matches(&credit, &fresh("Uber", None)), "the direction is a criterion too");
        let other_account = AutomaticRule { account_id: Some("other".into()), ..by_text.clone() };
        assert!(!matches(&other_account, &fresh("Uber", None)));
        let person = AutomaticRule { match_person_id: Some("p".into()), ..by_text };
        assert!(matches(&person, &fresh("uber eats", None)));
        assert!(!matches(&AutomaticRule { match_person_id: Some("q".into()), ..person }, &fresh("uber", None)));
    }
}
