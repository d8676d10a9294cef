//! The demo data `serve` seeds is consistent: every status of both kinds of bill, each
//! settled bill with exactly one settlement transaction, balances that add up, and one
//! attachment linked to a bill; its dates and timestamps read back as their types.

use crate::common;

use common::*;
use kobana_finance_mcp::domain::dates::{Date, Timestamp};

async fn scalar(h: &Harness, sql: &str) -> i64 {
    sql::query(sql.to_string()).fetch_one(&h.state.db).await.unwrap().try_get(0).unwrap()
}

#[tokio::test]
async fn demo_data_is_consistent() {
    let h = Harness::with_demo().await;
    for (kind, status) in [
        ("payable", "pending"),
        ("payable", "paid"),
        ("payable", "cancelled"),
        ("receivable", "pending"),
        ("receivable", "received"),
        ("receivable", "cancelled"),
    ] {
        let n =
            scalar(&h, &format!("SELECT COUNT(*) FROM billings WHERE kind = '{kind}' AND status = '{status}'")).await;
        assert!(n >= 1, "a {status} {kind}");
    }
    // Each settled bill has exactly one auto-created transaction, linked both ways, for its amount.
    let orphans = scalar(
        &h,
        "SELECT COUNT(*) FROM billings b WHERE b.status IN ('paid', 'received') AND 1 <> (
            SELECT COUNT(*) FROM financial_transactions t
             WHERE t.billing_id = b.id AND t.auto_created = 1 AND t.id = b.transaction_id AND t.amount_cents = b.amount_cents
               AND t.transaction_type = CASE b.kind WHEN 'payable' THEN 'debit' ELSE 'credit' END)",
    )
    .await;
    assert_eq!(orphans, 0);
    assert_eq!(
        scalar(&h, "SELECT COUNT(*) FROM financial_transactions WHERE auto_created = 1 AND billing_id IS NULL").await,
        0
    );
    // Balances: opening + realised credits − realised debits.
    let memberships = kobana_finance_mcp::storage::identity::memberships(&h.state.db, DEMO_OWNER).await.unwrap();
    let mut conn = h.state.db.acquire().await.unwrap();
    let checking =
        kobana_finance_mcp::ops::ledger::balance(&mut conn, &memberships[0], ACME_CHECKING_ACCOUNT).await.unwrap();
    assert_eq!(checking.to_string(), "13500.00", "10000.00 − 4500.00 rent + 8000.00 sale");
    let cash = kobana_finance_mcp::ops::ledger::balance(&mut conn, &memberships[0], ACME_CASH_ACCOUNT).await.unwrap();
    assert_eq!(cash.to_string(), "2500.00", "500.00 + 2000.00 contribution");
    drop(conn);
    // The category tree keeps its rules: three levels at most, children share the parent's type.
    assert_eq!(scalar(&h, "SELECT COUNT(*) FROM categories c JOIN categories p ON p.id = c.parent_id WHERE c.level <> p.level + 1 OR c.category_type <> p.category_type").await, 0);
    assert_eq!(
        scalar(
            &h,
            "SELECT COUNT(*) FROM attachment_links l JOIN billings b ON b.id = l.target_id AND l.target_type = b.kind"
        )
        .await,
        1
    );
    // Isolation is visible: the other workspace has its own records.
    assert!(
        scalar(&h, &format!("SELECT COUNT(*) FROM billings WHERE workspace_id = '{DEMO_WORKSPACE_BETA}'")).await >= 1
    );
}

#[tokio::test]
async fn stored_dates_and_timestamps_read_back_as_their_types_and_nothing_else_does() {
    let h = Harness::with_demo().await;
    let bills = sql::query(
        "SELECT due_date, competence_date, payment_date, document_date, created_at, updated_at FROM billings ORDER BY id",
    )
    .fetch_all(&h.state.db)
    .await
    .unwrap();
    assert!(!bills.is_empty());
    for row in &bills {
        for column in ["due_date", "competence_date"] {
            let text: String = row.try_get(column).unwrap();
            assert_eq!(row.try_get::<Date, _>(column).unwrap().to_string(), text, "{column}");
        }
        for column in ["payment_date", "document_date"] {
            let text: Option<String> = row.try_get(column).unwrap();
            let date: Option<Date> = row.try_get(column).unwrap();
            assert_eq!(date.map(|d| d.to_string()), text, "{column}");
        }
        for column in ["created_at", "updated_at"] {
            let text: String = row.try_get(column).unwrap();
            assert_eq!(row.try_get::<Timestamp, _>(column).unwrap().to_string(), text, "{column}");
        }
    }
    let odd = sql::query(
        "SELECT CAST('2026-02-30' AS TEXT) AS not_a_day, CAST('2026-11-30' AS TEXT) AS a_day, \
                CAST('2026-11-30 12:00:00' AS TEXT) AS spaced, CAST('2026-11-30T12:00:00.000Z' AS TEXT) AS fraction, \
                CAST(NULL AS TEXT) AS absent",
    )
    .fetch_one(&h.state.db)
    .await
    .unwrap();
    assert!(odd.try_get::<Date, _>("not_a_day").is_err());
    assert!(odd.try_get::<Date, _>("absent").is_err(), "NULL only into an Option");
    assert_eq!(odd.try_get::<Option<Date>, _>("absent").unwrap(), None);
    for column in ["a_day", "spaced", "fraction"] {
        assert!(odd.try_get::<Timestamp, _>(column).is_err(), "{column}");
    }
}
