//! The plain `/v1` resources, a row each: what the shared scenarios of `records` need to
//! know about a resource and cannot read from its declaration.

use serde_json::{json, Value};

use kobana_finance_mcp::ops::machinery::resource::Declaration;
use kobana_finance_mcp::ops::{self, machinery::validate::schema_of};

use crate::common::*;

/// One plain resource.
pub struct Row {
    /// Its `/v1` operations (collection, resource, shapes, own routes).
    pub declaration: &'static Declaration,
    /// The prefix of its operation ids (`{ids}_create`, …).
    pub ids: &'static str,
    /// Its read scope; the write scope is this with `.write`.
    pub scope: &'static str,
    /// A read scope of another resource.
    pub other_scope: &'static str,
    /// The table its records are stored in.
    pub table: &'static str,
    /// What its audit events call it (`{audit}.create`).
    pub audit: &'static str,
    /// The text field that names a record.
    pub label: &'static str,
    /// A valid create body in the Acme workspace, and one in Beta.
    pub acme: Value,
    pub beta: Value,
    /// Fields the answer to the Acme create has (nested objects: at least these fields).
    pub created: Value,
    /// Fields a record never has.
    pub absent: &'static [&'static str],
    /// A valid patch body.
    pub patch: Value,
    /// Its records belong to a company (`company_id`, filterable).
    pub company: bool,
    /// The finance role may delete it.
    pub finance_deletes: bool,
    /// A delete marks the row `deleted_at` and keeps it.
    pub soft_delete: bool,
    /// The bodies name the demo accounts `ACME_CHECKING_ACCOUNT` and `BETA_ACCOUNT`,
    /// written before the scenario.
    pub accounts: bool,
    /// Records of Beta the demo has (beside the one the scenario creates).
    pub beta_seeded: &'static [&'static str],
    /// The create request type's schema, and the fields it requires, in order.
    pub create_schema: fn() -> Value,
    pub required: &'static [&'static str],
    /// Bodies the create refuses with 400, and the field and reason it names.
    pub violations: Vec<(Value, &'static str, &'static str)>,
}

/// Collections with a create and a delete by id that other tests sweep instead: the
/// bills (`billing_tests!`), the reconciliations (`reconciliations.rs`: no list, no
/// update) and the invitations (`oidc/access.rs`: no get, no update).
pub const SWEPT_ELSEWHERE: &[&str] = &["/v1/payables", "/v1/receivables", "/v1/reconciliations", "/v1/invitations"];

/// The company the companies tests start from.
pub fn new_company() -> Value {
    json!({"name": "Nova Indústria Ltda", "cnpj": "12.ABC.345/01DE-35", "tax_regime": "LucroPresumido",
           "address": {"street": "Rua A", "number": "10", "neighborhood": "Centro", "city": "São Paulo", "state": "SP", "zip_code": "01001-000"}})
}

fn companies() -> Row {
    let cnpj = "11222333000181";
    Row {
        declaration: &ops::companies::OPERATIONS,
        ids: "companies",
        scope: "finance.companies",
        other_scope: "finance.people",
        table: "companies",
        audit: "companies",
        label: "name",
        acme: new_company(),
        beta: json!({"name": "Beta Nova Ltda", "cnpj": "11444777000242"}),
        // Branch digits 01DE are not 0001: a filial.
        created: json!({"cnpj": "12ABC34501DE35", "type": "filial", "active": true, "address": {"city": "São Paulo"}}),
        absent: &[],
        patch: json!({"trade_name": "Acme!"}),
        company: false,
        finance_deletes: false,
        soft_delete: false,
        accounts: false,
        beta_seeded: &[BETA_COMPANY],
        create_schema: schema_of::<ops::companies::CompanyCreate>,
        required: &["name", "cnpj"],
        violations: vec![
            (json!({"cnpj": cnpj}), "name", "required"),
            (json!({"name": "X", "cnpj": cnpj, "colour": "red"}), "colour", "unknown_field"),
            (json!({"name": 5, "cnpj": cnpj}), "name", "wrong_type"),
            (json!({"name": "X", "cnpj": cnpj, "tax_regime": "Offshore"}), "tax_regime", "invalid_value"),
            (json!({"name": "", "cnpj": cnpj}), "name", "too_short"),
            (json!({"name": "X", "cnpj": cnpj, "address": {"street": "R"}}), "address.number", "required"),
            (json!({"name": "X", "cnpj": cnpj, "locked_until": "2026-02-30"}), "locked_until", "invalid_date"),
        ],
    }
}

fn categories() -> Row {
    let s = ACME_SERVICES;
    Row {
        declaration: &ops::categories::OPERATIONS,
        ids: "categories",
        scope: "finance.categories",
        other_scope: "finance.companies",
        table: "categories",
        audit: "categories",
        label: "name",
        acme: json!({"company_id": s, "name": "  Receitas  ", "type": "credit"}),
        beta: json!({"company_id": BETA_COMPANY, "name": "Beta", "type": "debit"}),
        created: json!({"name": "Receitas", "company_id": s, "parent_id": null, "level": 1, "type": "credit"}),
        absent: &[],
        patch: json!({"name": "Folha"}),
        company: true,
        finance_deletes: true,
        soft_delete: false,
        accounts: false,
        beta_seeded: &[],
        create_schema: schema_of::<ops::categories::CategoryCreate>,
        required: &["company_id", "name", "type"],
        violations: vec![
            (json!({"company_id": s, "type": "debit"}), "name", "required"),
            (json!({"company_id": s, "name": "X"}), "type", "required"),
            (json!({"name": "X", "type": "debit"}), "company_id", "required"),
            (json!({"company_id": s, "name": "X", "type": "cost"}), "type", "invalid_value"),
            (json!({"company_id": s, "name": 5, "type": "debit"}), "name", "wrong_type"),
            (json!({"company_id": s, "name": "", "type": "debit"}), "name", "too_short"),
            (json!({"company_id": s, "name": "   ", "type": "debit"}), "name", "too_short"),
            (json!({"company_id": s, "name": "x".repeat(256), "type": "debit"}), "name", "too_long"),
            (json!({"company_id": s, "name": "X", "type": "debit", "level": 2}), "level", "unknown_field"),
            (
                json!({"company_id": "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a1z", "name": "X", "type": "debit"}),
                "company_id",
                "invalid_uuid",
            ),
            (
                json!({"company_id": s, "name": "X", "type": "debit", "parent_id": "7f000000-0000-4000-8000-00000000000g"}),
                "parent_id",
                "invalid_uuid",
            ),
        ],
    }
}

fn cost_centers() -> Row {
    let s = ACME_SERVICES;
    Row {
        declaration: &ops::cost_centers::OPERATIONS,
        ids: "classification_centers",
        scope: "finance.cost_centers",
        other_scope: "finance.categories",
        table: "classification_centers",
        audit: "classification_centers",
        label: "name",
        acme: json!({"company_id": s, "name": " Marketing ", "type": "cost", "description": "Campanhas"}),
        beta: json!({"company_id": BETA_COMPANY, "name": "Beta", "type": "cost"}),
        created: json!({"name": "Marketing", "company_id": s, "type": "cost", "description": "Campanhas", "active": true}),
        absent: &[],
        patch: json!({"active": false}),
        company: true,
        finance_deletes: true,
        soft_delete: false,
        accounts: false,
        beta_seeded: &[],
        create_schema: schema_of::<ops::cost_centers::CenterCreate>,
        required: &["company_id", "name", "type"],
        violations: vec![
            (json!({"company_id": s, "type": "cost"}), "name", "required"),
            (json!({"company_id": s, "name": "X"}), "type", "required"),
            (json!({"name": "X", "type": "cost"}), "company_id", "required"),
            (json!({"company_id": s, "name": "X", "type": "debit"}), "type", "invalid_value"),
            (json!({"company_id": s, "name": "", "type": "cost"}), "name", "too_short"),
            (json!({"company_id": s, "name": "  ", "type": "cost"}), "name", "too_short"),
            (json!({"company_id": s, "name": "x".repeat(256), "type": "cost"}), "name", "too_long"),
            (
                json!({"company_id": s, "name": "X", "type": "cost", "description": "d".repeat(501)}),
                "description",
                "too_long",
            ),
            (json!({"company_id": s, "name": "X", "type": "cost", "description": 5}), "description", "wrong_type"),
            (json!({"company_id": s, "name": "X", "type": "cost", "active": "no"}), "active", "wrong_type"),
            (
                json!({"company_id": "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a1z", "name": "X", "type": "cost"}),
                "company_id",
                "invalid_uuid",
            ),
        ],
    }
}

/// The person the people tests start from.
pub fn new_person() -> Value {
    json!({"company_id": ACME_COMPANY, "name": "Maria Fornecedora", "document_number": "529.982.247-25",
           "is_supplier": true, "notes": "Paga no dia 10"})
}

fn people() -> Row {
    let c = ACME_COMPANY;
    Row {
        declaration: &ops::people::OPERATIONS,
        ids: "people",
        scope: "finance.people",
        other_scope: "finance.companies",
        table: "people",
        audit: "people",
        label: "name",
        acme: new_person(),
        beta: json!({"company_id": BETA_COMPANY, "name": "Beta Cliente", "document_number": "52998224725"}),
        created: json!({"company_id": c, "document_number": "52998224725", "document_type": "cpf", "kind": "natural",
                        "is_supplier": true, "is_customer": false, "active": true, "emails": [], "phones": [],
                        "legal_name": null, "notes": "Paga no dia 10"}),
        absent: &[],
        patch: json!({"nickname": "Mari"}),
        company: true,
        finance_deletes: true,
        soft_delete: true,
        accounts: false,
        beta_seeded: &[],
        create_schema: schema_of::<ops::people::PersonCreate>,
        required: &["company_id", "name"],
        violations: vec![
            (json!({"name": "X"}), "company_id", "required"),
            (json!({"company_id": c}), "name", "required"),
            (json!({"company_id": c, "name": "X", "emails": ["a@b.com"]}), "emails", "unknown_field"),
            (json!({"company_id": c, "name": "X", "phones": []}), "phones", "unknown_field"),
            (json!({"company_id": c, "name": 5}), "name", "wrong_type"),
            (json!({"company_id": c, "name": "X", "is_customer": "yes"}), "is_customer", "wrong_type"),
            (json!({"company_id": c, "name": "X", "kind": "robot"}), "kind", "invalid_value"),
            (json!({"company_id": c, "name": "X", "document_type": "rg"}), "document_type", "invalid_value"),
            (json!({"company_id": c, "name": ""}), "name", "too_short"),
            (json!({"company_id": c, "name": "   "}), "name", "too_short"),
            (json!({"company_id": c, "name": "x".repeat(256)}), "name", "too_long"),
            (json!({"company_id": c, "name": "X", "notes": "x".repeat(2001)}), "notes", "too_long"),
            (json!({"company_id": "not-a-uuid", "name": "X"}), "company_id", "invalid_uuid"),
        ],
    }
}

fn taxes() -> Row {
    Row {
        declaration: &ops::taxes::OPERATIONS,
        ids: "taxes",
        scope: "finance.taxes",
        other_scope: "finance.people",
        table: "taxes",
        audit: "taxes",
        label: "name",
        acme: json!({"name": "IRRF", "default_rate": "1.5"}),
        beta: json!({"name": "Beta ISS", "default_rate": "5.00"}),
        // Withheld by default.
        created: json!({"name": "IRRF", "default_rate": "1.50", "default_withholding": true, "active": true}),
        // Taxes belong to the workspace.
        absent: &["company_id"],
        patch: json!({"default_rate": "0.65"}),
        company: false,
        finance_deletes: true,
        soft_delete: false,
        accounts: false,
        beta_seeded: &[],
        create_schema: schema_of::<ops::taxes::TaxCreate>,
        required: &["name"],
        violations: vec![
            (json!({}), "name", "required"),
            (json!({"name": "X", "company_id": ACME_COMPANY}), "company_id", "unknown_field"),
            (json!({"name": 5}), "name", "wrong_type"),
            (json!({"name": "X", "default_withholding": "yes"}), "default_withholding", "wrong_type"),
            (json!({"name": "X", "active": 1}), "active", "wrong_type"),
            (json!({"name": ""}), "name", "too_short"),
            (json!({"name": "  "}), "name", "too_short"),
            (json!({"name": "x".repeat(256)}), "name", "too_long"),
        ],
    }
}

fn accounts() -> Row {
    let c = ACME_COMPANY;
    let base = || json!({"company_id": c, "name": "Conta", "type": "checking"});
    let with = |field: &str, value: Value| {
        let mut b = base();
        b[field] = value;
        b
    };
    Row {
        declaration: &ops::accounts::OPERATIONS,
        ids: "financial_accounts",
        scope: "finance.accounts",
        other_scope: "finance.transactions",
        table: "financial_accounts",
        audit: "financial_accounts",
        label: "name",
        acme: json!({"company_id": c, "name": "Banco do Brasil", "type": "checking", "bank_code": "001",
                     "agency": "1234", "agency_digit": "5", "account_number": "98765", "account_digit": "0", "balance": "1500.00"}),
        beta: json!({"company_id": BETA_COMPANY, "name": "Conta Beta", "type": "checking", "balance": "1.00"}),
        // Leading zeros kept.
        created: json!({"type": "checking", "bank_id": BANCO_DO_BRASIL, "bank": {"code": "001", "name": "Banco do Brasil S.A."},
                        "balance": "1500.00", "active": true, "disable_reconcile": false}),
        absent: &["bank_code"],
        patch: json!({"name": "Renomeada"}),
        company: true,
        finance_deletes: false,
        soft_delete: false,
        accounts: false,
        beta_seeded: &[],
        create_schema: schema_of::<ops::accounts::AccountCreate>,
        required: &["company_id", "name", "type"],
        violations: vec![
            (json!({"company_id": c, "name": "Conta"}), "type", "required"),
            (with("type", json!("gold")), "type", "invalid_value"),
            (with("bank_id", json!("x")), "bank_id", "invalid_uuid"),
            (with("bank_code", json!("999")), "bank_code", "invalid_reference"),
            (with("bank_code", json!("1")), "bank_code", "too_short"),
            (with("bank_code", json!("0001")), "bank_code", "too_long"),
            (with("bank_code", json!("0a1")), "bank_code", "invalid_value"),
            (with("balance", json!(10.5)), "balance", "wrong_type"),
            (with("balance", json!("10.555")), "balance", "invalid_amount"),
            (with("balance", json!("1,00")), "balance", "invalid_amount"),
            (with("name", json!("   ")), "name", "too_short"),
            (with("company_id", json!("not-a-uuid")), "company_id", "invalid_uuid"),
        ],
    }
}

/// A transaction of Acme's demo checking account.
pub fn transaction(account: &str, amount: &str, kind: &str, date: &str) -> Value {
    json!({"company_id": ACME_COMPANY, "financial_account_id": account, "description": "Pagamento fornecedor",
           "amount": amount, "occurred_at": date, "type": kind})
}

fn transactions() -> Row {
    let mut acme = transaction(ACME_CHECKING_ACCOUNT, "1500.00", "debit", "2026-05-10");
    for (field, value) in [
        ("notes", json!("Nota")),
        ("document", json!("NF 123")),
        ("competence_date", json!("2026-04-30")),
        ("payment_method_kind", json!("pix")),
        ("classified", json!(true)),
    ] {
        acme[field] = value;
    }
    let base = || transaction(ACME_CHECKING_ACCOUNT, "10.00", "debit", "2026-05-10");
    let with = |field: &str, value: Value| {
        let mut b = base();
        b[field] = value;
        b
    };
    let without = |field: &str| {
        let mut b = base();
        b.as_object_mut().unwrap().remove(field);
        b
    };
    Row {
        declaration: &ops::transactions::declared::TRANSACTIONS,
        ids: "financial_transactions",
        scope: "finance.transactions",
        other_scope: "finance.accounts",
        table: "financial_transactions",
        audit: "financial_transactions",
        label: "description",
        acme,
        beta: json!({"company_id": BETA_COMPANY, "financial_account_id": BETA_ACCOUNT, "description": "Beta",
                     "amount": "10.00", "occurred_at": "2026-05-10", "type": "debit"}),
        created: json!({"amount": "1500.00", "type": "debit", "occurred_at": "2026-05-10", "competence_date": "2026-04-30",
                        "payment_method_kind": "pix", "classified": true, "is_pending": false, "auto_created": false,
                        "transfer_id": null, "classification_center_id": null, "classification_center_allocations": []}),
        absent: &[],
        patch: json!({"notes": "minha"}),
        company: true,
        finance_deletes: true,
        soft_delete: false,
        accounts: true,
        beta_seeded: &[],
        create_schema: schema_of::<ops::transactions::TransactionCreate>,
        required: &["company_id", "financial_account_id", "description", "amount", "occurred_at", "type"],
        violations: vec![
            (without("company_id"), "company_id", "required"),
            (without("financial_account_id"), "financial_account_id", "required"),
            (without("description"), "description", "required"),
            (without("amount"), "amount", "required"),
            (without("occurred_at"), "occurred_at", "required"),
            (without("type"), "type", "required"),
            (with("type", json!("transfer")), "type", "invalid_value"),
            (with("description", json!("")), "description", "too_short"),
            (with("description", json!("  ")), "description", "too_short"),
            (with("description", json!("x".repeat(501))), "description", "too_long"),
            (with("notes", json!("x".repeat(2001))), "notes", "too_long"),
            (with("occurred_at", json!("2026-02-30")), "occurred_at", "invalid_date"),
            (with("occurred_at", json!("10/05/2026")), "occurred_at", "invalid_date"),
            (with("document_date", json!("2026-13-01")), "document_date", "invalid_date"),
            (with("payment_method_kind", json!("barter")), "payment_method_kind", "invalid_value"),
            (with("auto_created", json!(true)), "auto_created", "unknown_field"),
            (with("transfer_id", json!(MISSING)), "transfer_id", "unknown_field"),
            (with("financial_account_id", json!("nope")), "financial_account_id", "invalid_uuid"),
            (with("is_pending", json!("yes")), "is_pending", "wrong_type"),
        ],
    }
}

fn automatic_rules() -> Row {
    let c = ACME_COMPANY;
    let rule = |extra: Value| {
        let mut body = json!({"company_id": c, "scope": "transactions", "set_description": "Viagens"});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body
    };
    Row {
        declaration: &ops::automatic_rules::OPERATIONS,
        ids: "automatic_rules",
        scope: "finance.automatic_rules",
        other_scope: "finance.categories",
        table: "automatic_rules",
        audit: "automatic_rules",
        label: "description_contains",
        acme: json!({"company_id": c, "scope": "transactions", "description_contains": " Uber ", "set_description": " Uber (viagens) "}),
        beta: json!({"company_id": BETA_COMPANY, "scope": "billings", "transaction_type": "debit", "description_contains": "beta", "set_description": "Beta"}),
        created: json!({"company_id": c, "scope": "transactions", "position": 1, "active": true, "description_contains": "Uber",
                        "set_description": "Uber (viagens)", "account_id": null, "transaction_type": null, "set_category_id": null}),
        absent: &[],
        patch: json!({"active": false}),
        company: true,
        finance_deletes: true,
        soft_delete: false,
        accounts: false,
        beta_seeded: &[],
        create_schema: schema_of::<ops::automatic_rules::AutomaticRuleCreate>,
        required: &["company_id", "scope"],
        violations: vec![
            (
                json!({"company_id": c, "scope": "ledger", "description_contains": "x", "set_description": "y"}),
                "scope",
                "invalid_value",
            ),
            (rule(json!({"description_contains": "x".repeat(256)})), "description_contains", "too_long"),
            (rule(json!({"description_contains": "x", "active": "no"})), "active", "wrong_type"),
            (rule(json!({"transaction_type": "outflow"})), "transaction_type", "invalid_value"),
            (rule(json!({})), "criteria", "criterion_required"),
            (
                json!({"company_id": c, "scope": "transactions", "description_contains": "x"}),
                "actions",
                "action_required",
            ),
            (
                json!({"company_id": c, "scope": "transactions", "description_contains": "x", "set_description": "  "}),
                "actions",
                "action_required",
            ),
            (
                rule(json!({"description_contains": "x", "set_expected_account_id": ACME_CHECKING_ACCOUNT})),
                "set_expected_account_id",
                "billings_only",
            ),
            (
                json!({"company_id": c, "scope": "billings", "account_id": ACME_CHECKING_ACCOUNT, "set_description": "y"}),
                "account_id",
                "transactions_only",
            ),
            (rule(json!({"match_person_id": "nope"})), "match_person_id", "invalid_uuid"),
            (rule(json!({"match_person_id": MISSING})), "match_person_id", "invalid_reference"),
            (rule(json!({"match_person_id": BETA_PERSON})), "match_person_id", "invalid_reference"),
            (
                json!({"company_id": "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a1z", "scope": "billings", "description_contains": "x", "set_description": "y"}),
                "company_id",
                "invalid_uuid",
            ),
        ],
    }
}

/// Every plain resource.
pub fn rows() -> Vec<Row> {
    vec![companies(), categories(), cost_centers(), people(), taxes(), accounts(), transactions(), automatic_rules()]
}
