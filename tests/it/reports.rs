//! `GET /v1/reports/aging`, `GET /v1/reports/income-statement` and their tools: bills and
//! transactions written by hand around fixed days, the answers computed here by hand —
//! the aging's bucket edges, the chart's subtotals, the period before — and compared with
//! what `…/aggregates` says of the same records; what is cancelled, paid, rejected at the
//! approval gate or another workspace's is never counted (a bill waiting there is owed and
//! counted); both doors answer alike.

use http::Method;
use serde_json::{json, Value};

use crate::common::*;

const NOW: &str = "2026-01-01T00:00:00Z";
/// The day the aging is measured from.
const AS_OF: &str = "2026-06-15";

/// Accounts: one of Acme Comércio, one of Acme Serviços, one of Beta.
const ACCOUNT: &str = "a0000000-0000-4000-8000-0000000000a1";
const SERVICES_ACCOUNT: &str = "a0000000-0000-4000-8000-0000000000a2";
const BETA_OWN_ACCOUNT: &str = "a0000000-0000-4000-8000-0000000000b1";

/// People of Acme Comércio.
const ANA: &str = "9e000000-0000-4000-8000-0000000000a1";
const BRUNO: &str = "9e000000-0000-4000-8000-0000000000a2";
const CARLA: &str = "9e000000-0000-4000-8000-0000000000a3";

/// The chart: revenue Receitas › Vendas › Produtos; expenses Despesas › Aluguel, and
/// Pessoal.
const RECEITAS: &str = "ca000000-0000-4000-8000-000000000001";
const VENDAS: &str = "ca000000-0000-4000-8000-000000000002";
const PRODUTOS: &str = "ca000000-0000-4000-8000-000000000003";
const DESPESAS: &str = "ca000000-0000-4000-8000-000000000004";
const ALUGUEL: &str = "ca000000-0000-4000-8000-000000000005";
const PESSOAL: &str = "ca000000-0000-4000-8000-000000000006";
/// A category nothing uses.
const UNUSED: &str = "ca000000-0000-4000-8000-000000000007";

fn day(text: &str, offset: i64) -> String {
    kobana_finance_mcp::domain::dates::Date::parse(text).unwrap().add_days(offset).unwrap().to_string()
}

fn cents(value: &Value) -> i64 {
    let text = value.as_str().unwrap_or_else(|| panic!("not an amount: {value}"));
    let negative = text.starts_with('-');
    let (units, decimals) = text.trim_start_matches('-').split_once('.').unwrap();
    let total = units.parse::<i64>().unwrap() * 100 + decimals.parse::<i64>().unwrap();
    if negative {
        -total
    } else {
        total
    }
}

async fn account(h: &Harness, id: &str, workspace: &str, company: &str) {
    exec(
        h,
        "INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, opening_balance_cents, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $1, 'checking', 0, $4, $4, 'system', 'system')",
        &[id, workspace, company, NOW],
    )
    .await;
}

async fn person(h: &Harness, id: &str, name: &str) {
    exec(
        h,
        "INSERT INTO people (id, workspace_id, company_id, name, is_supplier, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 1, $5, $5, 'system', 'system')",
        &[id, DEMO_WORKSPACE_ACME, ACME_COMPANY, name, NOW],
    )
    .await;
}

async fn category(h: &Harness, id: &str, name: &str, parent: Option<&str>, level: i64, kind: &str) {
    sql::query(
        "INSERT INTO categories (id, workspace_id, company_id, name, parent_id, level, category_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, 'system', 'system')",
    )
    .bind(id)
    .bind(DEMO_WORKSPACE_ACME)
    .bind(ACME_COMPANY)
    .bind(name)
    .bind(parent)
    .bind(level)
    .bind(kind)
    .bind(NOW)
    .execute(&h.state.db)
    .await
    .unwrap();
}

/// A bill as it is stored.
struct Bill {
    workspace: &'static str,
    company: &'static str,
    kind: &'static str,
    status: &'static str,
    cents: i64,
    due: String,
    competence: String,
    person: Option<&'static str>,
    category: Option<&'static str>,
    approval: Option<&'static str>,
}

impl Bill {
    fn payable(status: &'static str, cents: i64, due: String) -> Bill {
        Bill {
            workspace: DEMO_WORKSPACE_ACME,
            company: ACME_COMPANY,
            kind: "payable",
            status,
            cents,
            competence: due.clone(),
            due,
            person: None,
            category: None,
            approval: None,
        }
    }
}

async fn bill(h: &Harness, bill: Bill) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    sql::query(
        "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date,
                               billing_type, status, person_id, category_id, payment_approval, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Conta', $5, $6, $7, 'normal', $8, $9, $10, $11, $12, $12, 'system', 'system')",
    )
    .bind(id.clone())
    .bind(bill.workspace)
    .bind(bill.company)
    .bind(bill.kind)
    .bind(bill.cents)
    .bind(bill.due)
    .bind(bill.competence)
    .bind(bill.status)
    .bind(bill.person)
    .bind(bill.category)
    .bind(bill.approval)
    .bind(NOW)
    .execute(&h.state.db)
    .await
    .unwrap();
    id
}

/// A posted (or forecast) transaction.
struct Movement {
    workspace: &'static str,
    company: &'static str,
    account: &'static str,
    /// Credit > 0, debit < 0.
    cents: i64,
    occurred: &'static str,
    competence: Option<&'static str>,
    category: Option<&'static str>,
    pending: bool,
    transfer: Option<String>,
    billing: Option<String>,
}

impl Movement {
    fn posted(cents: i64, occurred: &'static str, category: Option<&'static str>) -> Movement {
        Movement {
            workspace: DEMO_WORKSPACE_ACME,
            company: ACME_COMPANY,
            account: ACCOUNT,
            cents,
            occurred,
            competence: None,
            category,
            pending: false,
            transfer: None,
            billing: None,
        }
    }
}

async fn movement(h: &Harness, m: Movement) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    sql::query(
        "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents, occurred_at,
                                             competence_date, transaction_type, category_id, is_pending, transfer_id, billing_id,
                                             auto_created, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Movimento', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, 'system', 'system')",
    )
    .bind(id.clone())
    .bind(m.workspace)
    .bind(m.company)
    .bind(m.account)
    .bind(m.cents.abs())
    .bind(m.occurred)
    .bind(m.competence)
    .bind(if m.cents > 0 { "credit" } else { "debit" })
    .bind(m.category)
    .bind(i64::from(m.pending))
    .bind(m.transfer)
    .bind(m.billing.clone())
    .bind(i64::from(m.billing.is_some()))
    .bind(NOW)
    .execute(&h.state.db)
    .await
    .unwrap();
    id
}

async fn get(h: &Harness, path: &str) -> Value {
    let reply = send(h, Method::GET, path, &h.api_token(DEMO_OWNER), None).await;
    assert_eq!(reply.status, 200, "{path}: {}", String::from_utf8_lossy(&reply.bytes));
    reply.json()
}

/// The buckets of an answer as (count, cents), in order.
fn buckets(answer: &Value) -> Vec<(i64, i64)> {
    answer["buckets"].as_array().unwrap().iter().map(|b| (b["count"].as_i64().unwrap(), cents(&b["amount"]))).collect()
}

/// Pending payables due 0, 1, 30, 31, 60, 61, 90 and 91 days before `AS_OF` and 5 days
/// after it, each of its own amount, one approved and one waiting for approval (both
/// owed), and what must not count: paid, cancelled, rejected, a receivable, another
/// workspace's. Answers the buckets by hand.
async fn aging_facts(h: &Harness) -> Vec<(i64, i64)> {
    for (id, name) in [(ANA, "Ana"), (BRUNO, "Bruno"), (CARLA, "Carla")] {
        person(h, id, name).await;
    }
    let late: [(i64, i64); 9] =
        [(-5, 100), (0, 200), (1, 400), (30, 800), (31, 1_600), (60, 3_200), (61, 6_400), (90, 12_800), (91, 25_600)];
    let people =
        [Some(ANA), Some(ANA), Some(BRUNO), Some(CARLA), None, Some(ANA), Some(BRUNO), Some(BRUNO), Some(CARLA)];
    for ((days, cents), who) in late.iter().zip(people) {
        bill(h, Bill { person: who, ..Bill::payable("pending", *cents, day(AS_OF, -days)) }).await;
    }
    // Approved at the gate: counted like an official one (1 day late).
    bill(
        h,
        Bill {
            approval: Some("creation_approved"),
            person: Some(CARLA),
            ..Bill::payable("pending", 51_200, day(AS_OF, -1))
        },
    )
    .await;
    // Waiting for approval: owed, counted too (10 days late, no person).
    bill(h, Bill { approval: Some("pending_approval"), ..Bill::payable("pending", 90_003, day(AS_OF, -10)) }).await;
    for excluded in [
        Bill::payable("paid", 90_001, day(AS_OF, -10)),
        Bill::payable("cancelled", 90_002, day(AS_OF, -10)),
        Bill { approval: Some("creation_rejected"), ..Bill::payable("pending", 90_004, day(AS_OF, -10)) },
        Bill { kind: "receivable", ..Bill::payable("pending", 90_005, day(AS_OF, -10)) },
        Bill {
            workspace: DEMO_WORKSPACE_BETA,
            company: BETA_COMPANY,
            ..Bill::payable("pending", 90_006, day(AS_OF, -10))
        },
    ] {
        bill(h, excluded).await;
    }
    // Acme Serviços owes one too: counted for the workspace, not for Acme Comércio.
    bill(h, Bill { company: ACME_SERVICES, ..Bill::payable("pending", 102_400, day(AS_OF, -100)) }).await;
    vec![(2, 300), (4, 400 + 800 + 51_200 + 90_003), (2, 1_600 + 3_200), (2, 6_400 + 12_800), (2, 25_600 + 102_400)]
}

#[tokio::test]
async fn aging_puts_each_pending_bill_in_its_bucket_at_the_edges_and_counts_nothing_else() {
    let h = Harness::new().await;
    let expected = aging_facts(&h).await;
    let answer = get(&h, &format!("/v1/reports/aging?kind=payable&as_of={AS_OF}")).await;
    assert_eq!(answer["as_of"], AS_OF);
    let names: Vec<&str> =
        answer["buckets"].as_array().unwrap().iter().map(|b| b["bucket"].as_str().unwrap()).collect();
    assert_eq!(names, ["not_due", "1_30", "31_60", "61_90", "over_90"]);
    assert_eq!(buckets(&answer), expected, "{answer}");
    let (count, total) = expected.iter().fold((0, 0), |(c, t), (count, cents)| (c + count, t + cents));
    assert_eq!((answer["total"]["count"].as_i64().unwrap(), cents(&answer["total"]["amount"])), (count, total));
    assert!(answer.get("people").is_none() && answer.get("others").is_none(), "{answer}");

    // One company: Acme Serviços' bill is left out.
    let company = get(&h, &format!("/v1/reports/aging?kind=payable&as_of={AS_OF}&company_id={ACME_COMPANY}")).await;
    let mut only = expected.clone();
    only[4] = (1, 25_600);
    assert_eq!(buckets(&company), only);
    assert_eq!(company["company_id"], ACME_COMPANY);

    // The next day, everything is a day later: the edges move by one.
    let later = get(&h, &format!("/v1/reports/aging?kind=payable&as_of={}", day(AS_OF, 1))).await;
    assert_eq!(
        buckets(&later),
        vec![
            (1, 100),
            (4, 200 + 400 + 51_200 + 90_003),
            (2, 800 + 1_600),
            (2, 3_200 + 6_400),
            (3, 12_800 + 25_600 + 102_400)
        ]
    );

    // The receivable side has its one pending receivable of Acme.
    let receivable = get(&h, &format!("/v1/reports/aging?kind=receivable&as_of={AS_OF}")).await;
    assert_eq!(buckets(&receivable), vec![(0, 0), (1, 90_005), (0, 0), (0, 0), (0, 0)]);
}

#[tokio::test]
async fn aging_totals_are_what_the_aggregates_call_pending() {
    let h = Harness::new().await;
    aging_facts(&h).await;
    for (kind, collection) in [("payable", "payables"), ("receivable", "receivables")] {
        for company in
            ["", "&company_id=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11", "&company_id=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a12"]
        {
            let aging = get(&h, &format!("/v1/reports/aging?kind={kind}{company}")).await;
            let aggregates = get(&h, &format!("/v1/{collection}/aggregates?{}", company.trim_start_matches('&'))).await;
            assert_eq!(aging["total"]["amount"], aggregates["pending"], "{kind}{company}: {aging} / {aggregates}");
        }
    }
}

#[tokio::test]
async fn aging_by_person_lists_the_largest_and_the_rest_adds_up() {
    let h = Harness::new().await;
    let expected = aging_facts(&h).await;
    // Per person by hand: Carla 800 + 25,600 + 51,200; Bruno 400 + 6,400 + 12,800; Ana
    // 100 + 200 + 3,200; no person: 1,600 and 90,003 waiting for approval (Acme Comércio)
    // and 102,400 (Acme Serviços).
    let answer = get(&h, &format!("/v1/reports/aging?kind=payable&as_of={AS_OF}&group_by=person&limit=2")).await;
    let people = answer["people"].as_array().unwrap();
    let listed: Vec<(Option<&str>, Option<&str>, i64)> = people
        .iter()
        .map(|p| (p["person_id"].as_str(), p["person_name"].as_str(), cents(&p["total"]["amount"])))
        .collect();
    assert_eq!(listed, vec![(None, None, 194_003), (Some(CARLA), Some("Carla"), 77_600)], "{answer}");
    assert_eq!(buckets(&people[1]), vec![(0, 0), (2, 52_000), (0, 0), (0, 0), (1, 25_600)]);
    let others = &answer["others"];
    assert_eq!(others["people"], 2, "Ana and Bruno");
    assert_eq!((others["total"]["count"].as_i64(), cents(&others["total"]["amount"])), (Some(6), 19_600 + 3_500));
    // The people listed and the others add up to the total, bucket by bucket.
    let mut sum = buckets(others);
    for p in people {
        for (at, (count, amount)) in buckets(p).into_iter().enumerate() {
            sum[at].0 += count;
            sum[at].1 += amount;
        }
    }
    assert_eq!(sum, expected);
    assert_eq!(buckets(&answer), expected);

    // The default limit lists everyone here, largest first (no person: 1,600 and 90,003
    // waiting for approval), and leaves no one out.
    let all =
        get(&h, &format!("/v1/reports/aging?kind=payable&as_of={AS_OF}&group_by=person&company_id={ACME_COMPANY}"))
            .await;
    let order: Vec<Option<&str>> = all["people"].as_array().unwrap().iter().map(|p| p["person_id"].as_str()).collect();
    assert_eq!(order, vec![None, Some(CARLA), Some(BRUNO), Some(ANA)]);
    assert_eq!((all["others"]["people"].as_i64(), all["others"]["total"]["amount"].as_str()), (Some(0), Some("0.00")));
}

/// The chart, two accounts, and the records of February and March 2026 (see each line).
async fn statement_facts(h: &Harness) {
    account(h, ACCOUNT, DEMO_WORKSPACE_ACME, ACME_COMPANY).await;
    account(h, SERVICES_ACCOUNT, DEMO_WORKSPACE_ACME, ACME_SERVICES).await;
    account(h, BETA_OWN_ACCOUNT, DEMO_WORKSPACE_BETA, BETA_COMPANY).await;
    category(h, RECEITAS, "Receitas", None, 1, "credit").await;
    category(h, VENDAS, "Vendas", Some(RECEITAS), 2, "credit").await;
    category(h, PRODUTOS, "Produtos", Some(VENDAS), 3, "credit").await;
    category(h, DESPESAS, "Despesas", None, 1, "debit").await;
    category(h, ALUGUEL, "Aluguel", Some(DESPESAS), 2, "debit").await;
    category(h, PESSOAL, "Pessoal", None, 1, "debit").await;
    category(h, UNUSED, "Sem uso", Some(DESPESAS), 2, "debit").await;
    let at = |date: &str| date.to_string();
    let receivable = |status: &'static str, cents: i64, competence: &str, category: &'static str| Bill {
        kind: "receivable",
        category: Some(category),
        competence: at(competence),
        ..Bill::payable(status, cents, at("2026-04-30"))
    };
    let payable = |status: &'static str, cents: i64, competence: &str, category: &'static str| Bill {
        category: Some(category),
        competence: at(competence),
        ..Bill::payable(status, cents, at("2026-04-30"))
    };
    // March, competence: a pending sale of products (1,000.00); a sale received (500.00)
    // whose settlement came in on 20 March; a cancelled sale (not counted).
    bill(h, receivable("pending", 100_000, "2026-03-10", PRODUTOS)).await;
    let received = bill(h, receivable("received", 50_000, "2026-03-05", VENDAS)).await;
    movement(h, Movement { billing: Some(received), ..Movement::posted(50_000, "2026-03-20", Some(VENDAS)) }).await;
    bill(h, receivable("cancelled", 99_999, "2026-03-07", PRODUTOS)).await;
    // February's rent (300.00), paid on 2 March.
    let rent = bill(h, payable("paid", 30_000, "2026-02-28", ALUGUEL)).await;
    movement(h, Movement { billing: Some(rent), ..Movement::posted(-30_000, "2026-03-02", Some(ALUGUEL)) }).await;
    // A payable a person rejected at the approval gate: not owed (one waiting there is).
    bill(h, Bill { approval: Some("creation_rejected"), ..payable("pending", 77_777, "2026-03-03", ALUGUEL) }).await;
    // March's rent (400.00), paid by a bank debit of 12 March that a reconciliation matched.
    let march_rent = bill(h, payable("paid", 40_000, "2026-03-01", ALUGUEL)).await;
    let debit = movement(h, Movement::posted(-40_000, "2026-03-12", Some(ALUGUEL))).await;
    let reconciliation = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO reconciliations (id, workspace_id, company_id, kind, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'payable', $4, $4, 'system', 'system')",
        &[&reconciliation, DEMO_WORKSPACE_ACME, ACME_COMPANY, NOW],
    )
    .await;
    for (kind, member, position) in [("billing", &march_rent, "0"), ("transaction", &debit, "1")] {
        exec(
            h,
            "INSERT INTO reconciliation_members (reconciliation_id, workspace_id, member_type, member_id, position)
             VALUES ($1, $2, $3, $4, CAST($5 AS BIGINT))",
            &[&reconciliation, DEMO_WORKSPACE_ACME, kind, member, position],
        )
        .await;
    }
    // Posted without a bill: 200.00 of revenue on the root (15 March); 50.00 of expenses
    // without a category (31 March); salaries of March paid on 1 April (120.00).
    movement(h, Movement::posted(20_000, "2026-03-15", Some(RECEITAS))).await;
    movement(h, Movement::posted(-5_000, "2026-03-31", None)).await;
    movement(h, Movement { competence: Some("2026-03-31"), ..Movement::posted(-12_000, "2026-04-01", Some(PESSOAL)) })
        .await;
    // A forecast: not a fact.
    movement(h, Movement { pending: true, ..Movement::posted(-88_888, "2026-03-20", Some(PESSOAL)) }).await;
    // 1,000.00 from Acme Comércio to Acme Serviços on 10 March: neither revenue nor expense.
    let transfer = Some(uuid::Uuid::new_v4().to_string());
    movement(h, Movement { transfer: transfer.clone(), ..Movement::posted(-100_000, "2026-03-10", None) }).await;
    movement(
        h,
        Movement {
            transfer,
            company: ACME_SERVICES,
            account: SERVICES_ACCOUNT,
            ..Movement::posted(100_000, "2026-03-10", None)
        },
    )
    .await;
    // February, competence: a pending sale of products (800.00).
    bill(h, receivable("pending", 80_000, "2026-02-10", PRODUTOS)).await;
    // Beta's revenue and bill of March: never Acme's.
    movement(
        h,
        Movement {
            workspace: DEMO_WORKSPACE_BETA,
            company: BETA_COMPANY,
            account: BETA_OWN_ACCOUNT,
            ..Movement::posted(500_000, "2026-03-15", None)
        },
    )
    .await;
    bill(
        h,
        Bill {
            workspace: DEMO_WORKSPACE_BETA,
            company: BETA_COMPANY,
            kind: "receivable",
            competence: at("2026-03-15"),
            ..Bill::payable("pending", 600_000, at("2026-03-15"))
        },
    )
    .await;
}

/// A side's categories as (id, level, own cents, total cents), in the answer's order.
fn lines(side: &Value) -> Vec<(&str, i64, i64, i64)> {
    side["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["category_id"].as_str().unwrap(),
                l["level"].as_i64().unwrap(),
                cents(&l["amount"]["amount"]),
                cents(&l["total"]["amount"]),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_competence_statement_counts_bills_and_unbilled_transactions_by_the_category_tree() {
    let h = Harness::new().await;
    statement_facts(&h).await;
    let march = get(&h, "/v1/reports/income-statement?from=2026-03-01&to=2026-03-31").await;
    assert_eq!((march["basis"].as_str(), march.get("previous")), (Some("competence"), None));
    // Revenue: products 1,000.00 under sales 500.00 under the root's own 200.00.
    assert_eq!(
        lines(&march["revenue"]),
        vec![(RECEITAS, 1, 20_000, 170_000), (VENDAS, 2, 50_000, 150_000), (PRODUTOS, 3, 100_000, 100_000)]
    );
    assert_eq!(cents(&march["revenue"]["total"]["amount"]), 170_000);
    assert_eq!(cents(&march["revenue"]["uncategorised"]["amount"]), 0);
    // Expenses: March's rent (the bill, not its reconciled debit), salaries of March by
    // competence; siblings by name (Despesas before Pessoal); 50.00 uncategorised.
    assert_eq!(
        lines(&march["expenses"]),
        vec![(DESPESAS, 1, 0, 40_000), (ALUGUEL, 2, 40_000, 40_000), (PESSOAL, 1, 12_000, 12_000)]
    );
    assert_eq!(cents(&march["expenses"]["uncategorised"]["amount"]), 5_000);
    assert_eq!(cents(&march["expenses"]["total"]["amount"]), 57_000);
    assert_eq!(cents(&march["net_result"]["amount"]), 170_000 - 57_000);
    assert_eq!(march["transfers_net"]["amount"], "0.00");
    assert!(march["net_result"].get("previous_amount").is_none(), "no comparison asked");

    // Against February (the whole month before): products 800.00, February's rent.
    let compared = get(&h, "/v1/reports/income-statement?from=2026-03-01&to=2026-03-31&compare=previous_period").await;
    assert_eq!(compared["previous"], json!({"from": "2026-02-01", "to": "2026-02-28"}));
    let revenue = &compared["revenue"]["categories"];
    assert_eq!(
        (revenue[0]["total"]["previous_amount"].as_str(), revenue[0]["total"]["change"].as_str()),
        (Some("800.00"), Some("900.00"))
    );
    assert_eq!(revenue[2]["amount"], json!({"amount": "1000.00", "previous_amount": "800.00", "change": "200.00"}));
    assert_eq!(
        compared["expenses"]["total"],
        json!({"amount": "570.00", "previous_amount": "300.00", "change": "270.00"})
    );
    assert_eq!(compared["net_result"], json!({"amount": "1130.00", "previous_amount": "500.00", "change": "630.00"}));
    // February alone says what the comparison said of it.
    let february = get(&h, "/v1/reports/income-statement?from=2026-02-01&to=2026-02-28").await;
    assert_eq!(cents(&february["net_result"]["amount"]), 50_000);
    assert_eq!(lines(&february["expenses"]), vec![(DESPESAS, 1, 0, 30_000), (ALUGUEL, 2, 30_000, 30_000)]);
}

#[tokio::test]
async fn the_cash_statement_is_what_moved_and_nets_to_the_transactions_aggregates() {
    let h = Harness::new().await;
    statement_facts(&h).await;
    let march = get(&h, "/v1/reports/income-statement?from=2026-03-01&to=2026-03-31&basis=cash").await;
    // Revenue: the sale's settlement, the root's 200.00; expenses: February's rent paid
    // in March, March's rent debit, 50.00 uncategorised; April's salaries not yet.
    assert_eq!(lines(&march["revenue"]), vec![(RECEITAS, 1, 20_000, 70_000), (VENDAS, 2, 50_000, 50_000)]);
    assert_eq!(lines(&march["expenses"]), vec![(DESPESAS, 1, 0, 70_000), (ALUGUEL, 2, 70_000, 70_000)]);
    assert_eq!(cents(&march["expenses"]["total"]["amount"]), 75_000);
    assert_eq!(cents(&march["net_result"]["amount"]), -5_000);
    // The transactions' aggregates: the workspace (the transfer's legs cancel out) and
    // one company (its transfer to the other company is transfers_net).
    for (company, transfers) in [("", 0), (ACME_COMPANY, -100_000), (ACME_SERVICES, 100_000)] {
        let scope = if company.is_empty() { String::new() } else { format!("&company_id={company}") };
        let report =
            get(&h, &format!("/v1/reports/income-statement?from=2026-03-01&to=2026-03-31&basis=cash{scope}")).await;
        let aggregates =
            get(&h, &format!("/v1/financial-transactions/aggregates?start_date=2026-03-01&end_date=2026-03-31{scope}"))
                .await;
        assert_eq!(cents(&report["transfers_net"]["amount"]), transfers, "{company}");
        assert_eq!(
            cents(&report["net_result"]["amount"]) + cents(&report["transfers_net"]["amount"]),
            cents(&aggregates["net"]),
            "{company}: {report} / {aggregates}"
        );
    }
    // A period of days: the ten days before, as many days.
    let days =
        get(&h, "/v1/reports/income-statement?from=2026-03-11&to=2026-03-20&basis=cash&compare=previous_period").await;
    assert_eq!(days["previous"], json!({"from": "2026-03-01", "to": "2026-03-10"}));
    assert_eq!(days["revenue"]["total"], json!({"amount": "700.00", "previous_amount": "0.00", "change": "700.00"}));
    assert_eq!(days["expenses"]["total"], json!({"amount": "400.00", "previous_amount": "300.00", "change": "100.00"}));
}

#[tokio::test]
async fn another_workspace_sees_only_its_own() {
    let h = Harness::new().await;
    statement_facts(&h).await;
    aging_facts(&h).await;
    let token = h.api_token(DEMO_BETA_OWNER);
    let reply = send(&h, Method::GET, "/v1/reports/income-statement?from=2026-03-01&to=2026-03-31", &token, None).await;
    let beta = reply.json();
    assert_eq!(cents(&beta["revenue"]["total"]["amount"]), 1_100_000, "{beta}");
    assert_eq!(cents(&beta["revenue"]["uncategorised"]["amount"]), 1_100_000);
    assert_eq!(beta["expenses"]["total"]["amount"], "0.00");
    let aging =
        send(&h, Method::GET, &format!("/v1/reports/aging?kind=payable&as_of={AS_OF}"), &token, None).await.json();
    assert_eq!((aging["total"]["count"].as_i64(), aging["total"]["amount"].as_str()), (Some(1), Some("900.06")));
    // Acme's company named from Beta is an invalid reference, as a missing one.
    for path in [
        format!("/v1/reports/aging?kind=payable&company_id={ACME_COMPANY}"),
        format!("/v1/reports/income-statement?from=2026-03-01&to=2026-03-31&company_id={ACME_COMPANY}"),
        format!("/v1/reports/aging?kind=payable&company_id={MISSING}"),
    ] {
        let reply = send(&h, Method::GET, &path, &token, None).await;
        assert_eq!((reply.status.as_u16(), details(&reply)), (422, pair("company_id", "invalid_reference")), "{path}");
    }
}

#[tokio::test]
async fn bad_queries_are_refused_naming_the_parameter_and_the_scope_is_checked() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for (path, field, reason) in [
        ("/v1/reports/aging", "kind", "required"),
        ("/v1/reports/aging?kind=invoice", "kind", "invalid_value"),
        ("/v1/reports/aging?kind=payable&as_of=2026-02-30", "as_of", "invalid_date"),
        ("/v1/reports/aging?kind=payable&group_by=category", "group_by", "invalid_value"),
        ("/v1/reports/aging?kind=payable&group_by=person&limit=51", "limit", "out_of_range"),
        ("/v1/reports/aging?kind=payable&status=pending", "status", "unknown_filter"),
        ("/v1/reports/income-statement?to=2026-01-31", "from", "required"),
        ("/v1/reports/income-statement?from=2026-01-31&to=2026-01-01", "to", "invalid_value"),
        ("/v1/reports/income-statement?from=2026-01-01&to=2027-01-02", "to", "out_of_range"),
        ("/v1/reports/income-statement?from=2026-01-01&to=2026-01-31&basis=accrual", "basis", "invalid_value"),
        ("/v1/reports/income-statement?from=2026-01-01&to=2026-01-31&compare=last_year", "compare", "invalid_value"),
    ] {
        let reply = send(&h, Method::GET, path, &token, None).await;
        assert_eq!((reply.status.as_u16(), details(&reply)), (400, pair(field, reason)), "{path}");
    }
    // A year, leap or not, is one period.
    let year = send(&h, Method::GET, "/v1/reports/income-statement?from=2028-01-01&to=2028-12-31", &token, None).await;
    assert_eq!(year.status, 200);
    // The scope of its own: a token without it is refused; the viewer may read.
    let other = v1_token(&h, DEMO_OWNER, "finance.payables finance.transactions finance.cash_flow");
    for path in ["/v1/reports/aging?kind=payable", "/v1/reports/income-statement?from=2026-01-01&to=2026-01-31"] {
        let refused = send(&h, Method::GET, path, &other, None).await;
        assert_eq!(refused.status, 403, "{path}");
        assert_eq!(refused.json()["error"]["details"]["required"], "finance.reports");
        assert_eq!(send(&h, Method::GET, path, &h.api_token(DEMO_VIEWER), None).await.status, 200, "{path}");
    }
}

#[tokio::test]
async fn the_tools_answer_what_the_routes_answer() {
    let h = Harness::new().await;
    statement_facts(&h).await;
    aging_facts(&h).await;
    let token = h.token(DEMO_OWNER);
    for (tool, arguments, path) in [
        (
            "finance_reports_aging",
            json!({"kind": "payable", "as_of": AS_OF, "group_by": "person", "limit": 3}),
            format!("/v1/reports/aging?kind=payable&as_of={AS_OF}&group_by=person&limit=3"),
        ),
        (
            "finance_reports_income_statement",
            json!({"from": "2026-03-01", "to": "2026-03-31", "basis": "cash", "compare": "previous_period", "company_id": ACME_COMPANY}),
            format!("/v1/reports/income-statement?from=2026-03-01&to=2026-03-31&basis=cash&compare=previous_period&company_id={ACME_COMPANY}"),
        ),
    ] {
        let result = h.send(call(tool, arguments).bearer(&token).build()).await.result();
        assert_eq!(result.get("isError"), None, "{tool}: {result}");
        assert_eq!(result["structuredContent"], get(&h, &path).await, "{tool}");
    }
    // A bad argument is the route's refusal, as an error result.
    let bad = h
        .send(
            call("finance_reports_income_statement", json!({"from": "2026-01-31", "to": "2026-01-01"}))
                .bearer(&token)
                .build(),
        )
        .await
        .result();
    assert_eq!((bad["isError"].as_bool(), tool_error(&bad)["code"].as_str()), (Some(true), Some("bad_request")));
    let unknown = h.send(call("finance_reports_aging", json!({"kind": "loan"})).bearer(&token).build()).await.result();
    assert_eq!(unknown["isError"], true, "{unknown}");
    assert_eq!(tool_error(&unknown)["details"]["field"], "kind", "{unknown}");
}
