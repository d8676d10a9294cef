//! `GET /v1/cash-flow` and `finance_cash_flow_get`: a month of ledger, bills and
//! forecasts around today, computed here by hand (day by day, then added up per period)
//! and compared with the answer for every granularity, for the company and for one
//! account; the cap, the zone, the refusals and the scope.

use std::collections::BTreeMap;

use http::Method;
use kobana_finance_mcp::domain::buckets::Granularity;
use kobana_finance_mcp::domain::dates::{Date, Zone};
use serde_json::{json, Value};

use crate::common::*;

const NOW: &str = "2026-01-01T00:00:00Z";

/// One fact of the month: a day (relative to today) and its effect.
#[derive(Clone, Copy)]
enum Fact {
    /// A posted transaction on an account: signed cents (credit > 0).
    Posted(&'static str, i64, i64),
    /// A transfer of cents from the first account to the second.
    Transfer(i64, &'static str, &'static str, i64),
    /// A pending (forecast) transaction on an account.
    Forecast(&'static str, i64, i64),
    /// A bill: kind, status, due day, cents, its account (settlement or forecast).
    Bill(&'static str, &'static str, i64, i64, Option<&'static str>),
}

const A: &str = "a0000000-0000-4000-8000-00000000000a";
const B: &str = "a0000000-0000-4000-8000-00000000000b";

const FACTS: &[Fact] = &[
    Fact::Posted(A, -40, 30_000),
    Fact::Posted(A, -10, -10_000),
    Fact::Posted(A, -3, 25_000),
    Fact::Transfer(-3, A, B, 20_000),
    Fact::Posted(B, -1, -5_000),
    Fact::Posted(A, 5, -2_000),
    Fact::Forecast(A, 2, 40_000),
    Fact::Bill("payable", "pending", -5, 7_000, Some(A)),
    Fact::Bill("receivable", "pending", 3, 12_000, None),
    Fact::Bill("payable", "pending", 20, 3_000, Some(B)),
    Fact::Bill("payable", "paid", -2, 99_900, Some(A)),
    Fact::Bill("receivable", "cancelled", 1, 88_800, Some(A)),
];

/// The accounts' opening balances.
const OPENING: &[(&str, i64)] = &[(A, 100_000), (B, 50_000)];

fn today() -> Date {
    Date::today_in(Zone::SaoPaulo)
}

fn day(offset: i64) -> Date {
    today().add_days(offset).unwrap()
}

async fn write_facts(h: &Harness) {
    for (account, cents) in OPENING {
        exec(
            h,
            "INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, opening_balance_cents, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $1, 'checking', CAST($4 AS BIGINT), $5, $5, 'system', 'system')",
            &[account, DEMO_WORKSPACE_ACME, ACME_COMPANY, &cents.to_string(), NOW],
        )
        .await;
    }
    let transaction = |account: &'static str, offset: i64, cents: i64, pending: bool, transfer: Option<String>| {
        let id = uuid::Uuid::new_v4().to_string();
        let kind = if cents > 0 { "credit" } else { "debit" };
        (id, account, day(offset), cents.abs(), kind, i64::from(pending), transfer)
    };
    let mut rows = Vec::new();
    for fact in FACTS {
        match *fact {
            Fact::Posted(account, offset, cents) => rows.push(transaction(account, offset, cents, false, None)),
            Fact::Forecast(account, offset, cents) => rows.push(transaction(account, offset, cents, true, None)),
            Fact::Transfer(offset, from, to, cents) => {
                let transfer = uuid::Uuid::new_v4().to_string();
                rows.push(transaction(from, offset, -cents, false, Some(transfer.clone())));
                rows.push(transaction(to, offset, cents, false, Some(transfer)));
            }
            Fact::Bill(kind, status, offset, cents, account) => {
                let settled = if status == "paid" { account } else { None };
                sql::query(
                    "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date,
                                           billing_type, status, financial_account_id, expected_account_id, created_at, updated_at, created_via, updated_via)
                     VALUES ($1, $2, $3, $4, 'Conta', $5, $6, $6, 'normal', $7, $8, $9, $10, $10, 'system', 'system')",
                )
                .bind(uuid::Uuid::new_v4().to_string())
                .bind(DEMO_WORKSPACE_ACME)
                .bind(ACME_COMPANY)
                .bind(kind)
                .bind(cents)
                .bind(day(offset))
                .bind(status)
                .bind(settled)
                .bind(if status == "paid" { None } else { account })
                .bind(NOW)
                .execute(&h.state.db)
                .await
                .unwrap();
            }
        }
    }
    for (id, account, date, cents, kind, pending, transfer) in rows {
        sql::query(
            "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents, occurred_at,
                                                 transaction_type, is_pending, transfer_id, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, 'Movimento', $5, $6, $7, $8, $9, $10, $10, 'system', 'system')",
        )
        .bind(id)
        .bind(DEMO_WORKSPACE_ACME)
        .bind(ACME_COMPANY)
        .bind(account)
        .bind(cents)
        .bind(date)
        .bind(kind)
        .bind(pending)
        .bind(transfer)
        .bind(NOW)
        .execute(&h.state.db)
        .await
        .unwrap();
    }
}

/// What one day adds, by hand: posted income and expenses, projected income and expenses.
#[derive(Default, Clone, Copy, Debug, PartialEq)]
struct Day {
    income: i64,
    expenses: i64,
    projected_income: i64,
    projected_expenses: i64,
}

/// The ledger of `FACTS` as seen from `accounts` (None: the whole company): the opening
/// balance at `from`, each day's flows in `from..=to`, and the late pending flow.
fn by_hand(accounts: Option<&[&str]>, from: i64, to: i64) -> (i64, BTreeMap<i64, Day>, (i64, i64), i64) {
    let counted = |account: &str| accounts.is_none_or(|set| set.contains(&account));
    let mut opening: i64 = OPENING.iter().filter(|(a, _)| counted(a)).map(|(_, c)| c).sum();
    let mut current = opening;
    let mut days: BTreeMap<i64, Day> = (from..=to).map(|d| (d, Day::default())).collect();
    let mut overdue = (0, 0);
    let mut posted = |account: &str, offset: i64, cents: i64, days: &mut BTreeMap<i64, Day>| {
        if !counted(account) {
            return;
        }
        if offset < from {
            opening += cents;
        } else if let Some(flow) = days.get_mut(&offset) {
            if cents > 0 {
                flow.income += cents;
            } else {
                flow.expenses -= cents;
            }
        }
        if offset <= 0 {
            current += cents;
        }
    };
    let mut expected = |offset: i64, income: i64, expenses: i64, days: &mut BTreeMap<i64, Day>| {
        if offset < 0 {
            overdue.0 += income;
            overdue.1 += expenses;
            let today = days.get_mut(&0).expect("the range holds today");
            today.projected_income += income;
            today.projected_expenses += expenses;
        } else if let Some(flow) = days.get_mut(&offset) {
            flow.projected_income += income;
            flow.projected_expenses += expenses;
        }
    };
    for fact in FACTS {
        match *fact {
            Fact::Posted(account, offset, cents) => posted(account, offset, cents, &mut days),
            Fact::Transfer(offset, from_account, to_account, cents) => {
                // Money staying among the counted accounts moves nothing.
                if !(counted(from_account) && counted(to_account)) {
                    posted(from_account, offset, -cents, &mut days);
                    posted(to_account, offset, cents, &mut days);
                }
            }
            Fact::Forecast(account, offset, cents) if counted(account) => {
                expected(offset, cents.max(0), (-cents).max(0), &mut days)
            }
            Fact::Forecast(..) => {}
            Fact::Bill(kind, "pending", offset, cents, account) => {
                let counts = match accounts {
                    None => true,
                    Some(set) => account.is_some_and(|a| set.contains(&a)),
                };
                if counts {
                    let (income, expenses) = if kind == "receivable" { (cents, 0) } else { (0, cents) };
                    expected(offset, income, expenses, &mut days);
                }
            }
            Fact::Bill(..) => {}
        }
    }
    (opening, days, overdue, current)
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

async fn cash_flow(h: &Harness, query: &str) -> Value {
    let reply = send(h, Method::GET, &format!("/v1/cash-flow?{query}"), &h.api_token(DEMO_OWNER), None).await;
    assert_eq!(reply.status, 200, "{query}: {}", String::from_utf8_lossy(&reply.bytes));
    reply.json()
}

/// Checks an answer against the hand-computed ledger, period by period.
fn check(answer: &Value, granularity: Granularity, accounts: Option<&[&str]>, from: i64, to: i64) {
    let (opening, days, overdue, current) = by_hand(accounts, from, to);
    assert_eq!(answer["granularity"], granularity.as_str());
    assert_eq!(cents(&answer["current_balance"]), current, "current balance");
    assert_eq!(answer["today_bucket"], granularity.key(granularity.start(today())));
    assert_eq!(answer["truncated"], false);
    assert_eq!(
        (cents(&answer["retroactive_overdue"]["income"]), cents(&answer["retroactive_overdue"]["expenses"])),
        overdue
    );
    // The periods by hand: each day into the period holding it.
    let mut periods: Vec<(String, Day, bool)> = Vec::new();
    for (&offset, flow) in &days {
        let date = day(offset);
        let key = granularity.key(granularity.start(date));
        if periods.last().is_none_or(|(last, _, _)| *last != key) {
            periods.push((key, Day::default(), granularity.start(date) > today()));
        }
        let period = &mut periods.last_mut().unwrap().1;
        period.income += flow.income;
        period.expenses += flow.expenses;
        period.projected_income += flow.projected_income;
        period.projected_expenses += flow.projected_expenses;
    }
    let buckets = answer["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), periods.len(), "{answer}");
    let mut balance = opening;
    for (bucket, (key, flow, future)) in buckets.iter().zip(&periods) {
        assert_eq!(bucket["bucket"], *key);
        let got = Day {
            income: cents(&bucket["income"]),
            expenses: cents(&bucket["expenses"]),
            projected_income: cents(&bucket["projected_income"]),
            projected_expenses: cents(&bucket["projected_expenses"]),
        };
        assert_eq!(got, *flow, "{key}: {bucket}");
        let net = flow.income - flow.expenses + flow.projected_income - flow.projected_expenses;
        assert_eq!(cents(&bucket["net"]), net, "{key}");
        assert_eq!(cents(&bucket["opening_balance"]), balance, "{key}");
        balance += net;
        assert_eq!(cents(&bucket["closing_balance"]), balance, "{key}");
        assert_eq!(bucket["is_future"], *future, "{key}");
    }
}

#[tokio::test]
async fn a_month_of_ledger_adds_up_in_every_granularity_for_the_company_and_for_an_account() {
    let h = Harness::new().await;
    write_facts(&h).await;
    let (from, to) = (-14, 14);
    for granularity in [Granularity::Day, Granularity::Week, Granularity::Month, Granularity::Year] {
        let range = format!("from={}&to={}&granularity={}", day(from), day(to), granularity.as_str());
        check(&cash_flow(&h, &range).await, granularity, None, from, to);
        let company = cash_flow(&h, &format!("{range}&company_id={ACME_COMPANY}")).await;
        check(&company, granularity, None, from, to);
        check(&cash_flow(&h, &format!("{range}&account_id={A}")).await, granularity, Some(&[A]), from, to);
        check(&cash_flow(&h, &format!("{range}&account_id={B}")).await, granularity, Some(&[B]), from, to);
    }
    // The month's money, by hand: from 1,800.00 at the start to 2,330.00 at the end
    // (a posted debit of 20.00 in five days; 400.00 forecast, 120.00 due to us, 70.00
    // late that we owe).
    let month = cash_flow(&h, &format!("from={}&to={}&granularity=year", day(from), day(to))).await;
    let years = month["buckets"].as_array().unwrap();
    assert_eq!(cents(&years[0]["opening_balance"]), 180_000);
    assert_eq!(cents(&years.last().unwrap()["closing_balance"]), 233_000);
    assert_eq!(cents(&month["current_balance"]), 190_000);
}

#[tokio::test]
async fn a_range_after_today_opens_with_what_is_expected_before_it() {
    let h = Harness::new().await;
    write_facts(&h).await;
    // From the day after tomorrow's tomorrow: the late payable, the forecast on day 2
    // and the posted debit and receivable before day 4 are all before the range.
    let answer = cash_flow(&h, &format!("from={}&to={}&granularity=day", day(4), day(6))).await;
    let buckets = answer["buckets"].as_array().unwrap();
    // 1,900.00 today − 70.00 late + 400.00 forecast + 120.00 due to us.
    assert_eq!(cents(&buckets[0]["opening_balance"]), 235_000, "{answer}");
    assert_eq!(cents(&buckets[1]["expenses"]), 2_000, "the posted debit of day 5");
    assert!(buckets.iter().all(|b| b["is_future"] == true));
    // A range before today: nothing projected, the late flow only reported.
    let past = cash_flow(&h, &format!("from={}&to={}&granularity=day", day(-14), day(-1))).await;
    let buckets = past["buckets"].as_array().unwrap();
    assert!(buckets.iter().all(|b| b["projected_expenses"] == "0.00" && b["is_future"] == false), "{past}");
    assert_eq!(past["retroactive_overdue"]["expenses"], "70.00");
}

#[tokio::test]
async fn a_range_past_the_cap_is_refused_and_today_is_the_zones() {
    let h = Harness::new().await;
    // The one cap of every ranged route: by day, `to` at most 365 days after `from`.
    let answer = cash_flow(&h, "from=2026-01-01&to=2027-01-01&granularity=day").await;
    assert_eq!(answer["truncated"], false);
    let buckets = answer["buckets"].as_array().unwrap();
    assert_eq!((buckets.len(), buckets[365]["bucket"].as_str()), (366, Some("2027-01-01")));
    let token = h.api_token(DEMO_OWNER);
    for query in ["from=2026-01-01&to=2027-01-02&granularity=day", "from=2026-01-01&to=2036-01-01"] {
        let reply = send(&h, Method::GET, &format!("/v1/cash-flow?{query}"), &token, None).await;
        let body = reply.json();
        assert_eq!(
            (
                reply.status.as_u16(),
                body["error"]["details"]["field"].as_str(),
                body["error"]["details"]["reason"].as_str()
            ),
            (400, Some("to"), Some("out_of_range")),
            "{query}: {body}"
        );
    }
    let months = cash_flow(&h, "from=2026-01-01&to=2027-12-31").await;
    assert_eq!((months["truncated"].as_bool(), months["buckets"].as_array().unwrap().len()), (Some(false), 24));
    for (tz, zone) in
        [("UTC", Zone::Fixed(0)), ("America/Rio_Branco", Zone::Fixed(-5)), ("America/Noronha", Zone::Fixed(-2))]
    {
        let answer = cash_flow(&h, &format!("from=2026-01-01&to=2026-01-31&granularity=day&tz={tz}")).await;
        assert_eq!(answer["today_bucket"], Date::today_in(zone).to_string(), "{tz}");
    }
}

#[tokio::test]
async fn bad_queries_are_refused_naming_the_parameter_and_the_scope_is_checked() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for (query, field, reason) in [
        ("to=2026-01-31", "from", "required"),
        ("from=2026-01-01", "to", "required"),
        ("from=2026-01-31&to=2026-01-01", "to", "invalid_value"),
        ("from=2026-01-01&to=2026-01-31&granularity=quarter", "granularity", "invalid_value"),
        ("from=2026-01-01&to=2026-01-31&tz=Europe/Lisbon", "tz", "invalid_value"),
        ("from=2026-13-01&to=2026-01-31", "from", "invalid_date"),
        ("from=2026-01-01&to=2026-01-31&status=pending", "status", "unknown_filter"),
    ] {
        let reply = send(&h, Method::GET, &format!("/v1/cash-flow?{query}"), &token, None).await;
        let body = reply.json();
        assert_eq!(
            (
                reply.status.as_u16(),
                body["error"]["details"]["field"].as_str(),
                body["error"]["details"]["reason"].as_str()
            ),
            (400, Some(field), Some(reason)),
            "{query}: {body}"
        );
    }
    // Another workspace's account or company is an invalid reference, as a missing one
    // (the one answer of every route, `refs::named`).
    for (query, field) in [
        (format!("account_id={BETA_ACCOUNT}"), "account_id"),
        (format!("company_id={BETA_COMPANY}"), "company_id"),
        (format!("account_id={MISSING}"), "account_id"),
    ] {
        let reply =
            send(&h, Method::GET, &format!("/v1/cash-flow?from=2026-01-01&to=2026-01-31&{query}"), &token, None).await;
        let body = reply.json();
        assert_eq!(
            (reply.status.as_u16(), body["error"]["code"].as_str(), body["error"]["details"]["field"].as_str()),
            (422, Some("unprocessable_entity"), Some(field)),
            "{query}: {body}"
        );
        assert_eq!(body["error"]["details"]["reason"], "invalid_reference", "{query}");
    }
    // The scope of its own: a token without it is refused, the viewer may read.
    let other = h.token_with(DEMO_OWNER, Some("finance.payables finance.transactions"), |c| {
        c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"))
    });
    let refused = send(&h, Method::GET, "/v1/cash-flow?from=2026-01-01&to=2026-01-31", &other, None).await;
    assert_eq!(refused.status, 403);
    assert_eq!(refused.json()["error"]["details"]["required"], "finance.cash_flow");
    let viewer =
        send(&h, Method::GET, "/v1/cash-flow?from=2026-01-01&to=2026-01-31", &h.api_token(DEMO_VIEWER), None).await;
    assert_eq!(viewer.status, 200);
}

#[tokio::test]
async fn the_tool_answers_what_the_route_answers() {
    let h = Harness::new().await;
    write_facts(&h).await;
    let range =
        json!({"from": day(-14).to_string(), "to": day(14).to_string(), "granularity": "week", "account_id": A});
    let reply = h.send(call("finance_cash_flow_get", range).bearer(&h.token(DEMO_OWNER)).build()).await;
    let result = reply.result();
    assert_eq!(result.get("isError"), None, "{result}");
    let route = cash_flow(&h, &format!("from={}&to={}&granularity=week&account_id={A}", day(-14), day(14))).await;
    assert_eq!(result["structuredContent"], route);
    // A bad argument is the route's 400, as an error result.
    let bad = h
        .send(
            call("finance_cash_flow_get", json!({"from": "2026-01-31", "to": "2026-01-01"}))
                .bearer(&h.token(DEMO_OWNER))
                .build(),
        )
        .await
        .result();
    assert_eq!(bad["isError"], true, "{bad}");
    assert_eq!(tool_error(&bad)["code"], "bad_request", "{bad}");
}

/// The posted income and expenses of 2026-12-05 in a scope (`""`: the workspace's).
async fn fifth(h: &Harness, scope: &str) -> (i64, i64) {
    let answer = cash_flow(h, &format!("from=2026-12-05&to=2026-12-05&granularity=day{scope}")).await;
    let bucket = &answer["buckets"][0];
    (cents(&bucket["income"]), cents(&bucket["expenses"]))
}

async fn ok(h: &Harness, method: Method, path: &str, token: &str, body: Option<Value>) -> Value {
    let reply = send(h, method.clone(), path, token, body).await;
    assert!(reply.status.is_success(), "{method} {path}: {}", text(&reply));
    if reply.bytes.is_empty() {
        Value::Null
    } else {
        reply.json()
    }
}

/// Transfers within a company and between two, moved by every write a transaction and a
/// bill take (create, update, settle, cancel, reopen, delete): the running totals stay
/// the sums of their rows, and a transfer is money staying home for the workspace and
/// for a company it stays in, money moving for a company it leaves or enters and for
/// each account.
#[tokio::test]
async fn transfers_and_every_write_keep_the_days_totals_and_each_scope_counts_its_own() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let services = crate::transactions::account(&h, &api, ACME_SERVICES, "Serviços").await;
    let scopes = [
        String::new(),
        format!("&company_id={ACME_COMPANY}"),
        format!("&company_id={ACME_SERVICES}"),
        format!("&account_id={ACME_CHECKING_ACCOUNT}"),
        format!("&account_id={ACME_CASH_ACCOUNT}"),
        format!("&account_id={services}"),
        format!("&company_id={ACME_COMPANY}&account_id={ACME_CHECKING_ACCOUNT}"),
    ];
    let mut before = Vec::new();
    for scope in &scopes {
        before.push(fifth(&h, scope).await);
    }
    let transfer = |from: &str, to: &str, amount: &str| {
        json!({"from_account_id": from, "to_account_id": to, "amount": amount, "occurred_at": "2026-12-05",
               "description": "Transferência"})
    };
    let internal =
        ok(&h, Method::POST, "/v1/transfers", &api, Some(transfer(ACME_CHECKING_ACCOUNT, ACME_CASH_ACCOUNT, "100.00")))
            .await;
    ok(&h, Method::POST, "/v1/transfers", &api, Some(transfer(ACME_CHECKING_ACCOUNT, &services, "30.00"))).await;
    let back = ok(&h, Method::POST, "/v1/transfers", &api, Some(transfer(&services, ACME_CASH_ACCOUNT, "7.00"))).await;
    assert_report_totals_agree(&h).await;
    // By scope: (income, expenses) added on the day.
    let added = [(0, 0), (700, 3_000), (3_000, 700), (0, 13_000), (10_700, 0), (3_000, 700), (0, 13_000)];
    for ((scope, (income, expenses)), (more_income, more_expenses)) in scopes.iter().zip(&before).zip(added) {
        assert_eq!(fifth(&h, scope).await, (income + more_income, expenses + more_expenses), "scope {scope:?}");
    }

    // Every write a movement takes.
    let movement = json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CHECKING_ACCOUNT, "description": "Venda",
        "amount": "50.00", "occurred_at": "2026-12-05", "type": "credit"});
    let sale = ok(&h, Method::POST, "/v1/financial-transactions", &api, Some(movement.clone())).await;
    let sale = format!("/v1/financial-transactions/{}", sale["id"].as_str().unwrap());
    ok(&h, Method::PATCH, &sale, &api, Some(json!({"amount": "60.00", "occurred_at": "2026-12-06"}))).await;
    ok(&h, Method::PATCH, &sale, &api, Some(json!({"is_pending": true, "type": "debit"}))).await;
    let gone = ok(&h, Method::POST, "/v1/financial-transactions", &api, Some(movement)).await;
    ok(&h, Method::DELETE, &format!("/v1/financial-transactions/{}", gone["id"].as_str().unwrap()), &api, None).await;
    assert_report_totals_agree(&h).await;

    // Every write a bill takes, through the approval gate.
    let bill = json!({"company_id": ACME_COMPANY, "description": "Aluguel extra", "amount": "80.00", "due_date": "2026-12-20",
        "person_id": ACME_LANDLORD, "expected_account_id": ACME_CASH_ACCOUNT});
    let extra = ok(&h, Method::POST, "/v1/payables", &api, Some(bill.clone())).await;
    let extra = format!("/v1/payables/{}", extra["id"].as_str().unwrap());
    ok(&h, Method::PATCH, &extra, &api, Some(json!({"amount": "85.00", "due_date": "2026-12-21"}))).await;
    let rent = format!("/v1/payables/{ACME_RENT_DECEMBER}");
    let settle = json!({"payment_date": "2026-12-05", "financial_account_id": ACME_CHECKING_ACCOUNT});
    ok(&h, Method::POST, &format!("{rent}/settle"), &api, Some(settle)).await;
    assert_report_totals_agree(&h).await;
    ok(&h, Method::POST, &format!("{rent}/reopen"), &api, None).await;
    ok(&h, Method::POST, &format!("/v1/payables/{ACME_SUPPLIES_PENDING}/cancel"), &api, None).await;
    assert_report_totals_agree(&h).await;
    ok(&h, Method::POST, &format!("/v1/payables/{ACME_SUPPLIES_PENDING}/reopen"), &api, None).await;
    ok(&h, Method::DELETE, &extra, &api, None).await;
    assert_report_totals_agree(&h).await;

    // A transfer deleted takes both legs, and its pair's part with it.
    let leg = format!("/v1/financial-transactions/{}", internal["from_transaction_id"].as_str().unwrap());
    ok(&h, Method::DELETE, &leg, &api, None).await;
    let leg = format!("/v1/financial-transactions/{}", back["to_transaction_id"].as_str().unwrap());
    ok(&h, Method::DELETE, &leg, &api, None).await;
    assert_report_totals_agree(&h).await;
    let left = [(0, 0), (0, 3_000), (3_000, 0), (0, 3_000), (0, 0), (3_000, 0), (0, 3_000)];
    for ((scope, (income, expenses)), (more_income, more_expenses)) in scopes.iter().zip(&before).zip(left) {
        assert_eq!(fifth(&h, scope).await, (income + more_income, expenses + more_expenses), "scope {scope:?}");
    }
}
