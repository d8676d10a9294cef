//! Apportionment (rateio): splitting a transaction's or a bill's amount across
//! classification centers. Each item gives a percentage (0–100, ≤ 2 decimals), an
//! amount, or both; the effective amounts must add up to the record's amount within
//! R$ 0.01, and every center must match the record's polarity. Writes replace the whole
//! set (`[]` clears it; omitting the field leaves it as it is). The arithmetic is
//! [`crate::domain::apportionment`]'s; here the request items are checked and stored.

use std::collections::HashMap;

use crate::storage::{sql, Conn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::machinery::common::{invalid, unprocessable};
use super::machinery::refs::{self, CompanyRef, Polarity};
use crate::domain::apportionment::adds_up;
pub use crate::domain::apportionment::Allocation;
use crate::domain::money::{Amount, Cents};
use crate::domain::names::Name;
use crate::domain::percent::Percent;
use crate::error::{ApiError, ErrorCode};
use crate::storage::identity::Membership;

/// One item of `classification_centers[]` in a request.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AllocationInput {
    pub classification_center_id: String,
    /// Percent, 0–100, up to 2 decimals ("12.50").
    #[serde(default)]
    #[schemars(length(min = 1, max = 6))]
    pub percentage: Option<String>,
    #[serde(default)]
    pub amount: Option<Amount>,
}

/// How a new record is apportioned, as its request sends it: across
/// `classification_centers`, or to one center (by id or by name) for 100 % of the
/// amount; neither leaves it unapportioned.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct CentersInput {
    /// A single classification center taking 100 % of the amount (exclusive with classification_centers).
    #[serde(default)]
    pub classification_center_id: Option<String>,
    /// Find or create a center of this name (cost for debit, revenue for credit).
    #[serde(default)]
    pub classification_center_name: Option<Name>,
    /// Apportionment: percentage and/or amount per center, adding up to the amount.
    #[serde(default)]
    pub classification_centers: Option<Vec<AllocationInput>>,
}

/// An item as read back.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AllocationView {
    pub classification_center_id: String,
    pub classification_center_name: String,
    pub percentage: Option<String>,
    #[schemars(with = "Option<String>")]
    pub amount: Option<Cents>,
}

/// Checks the items against `total` (shape and sums; centers are checked by [`check`]).
pub fn resolve(total: Cents, items: &[AllocationInput]) -> Result<Vec<Allocation>, ApiError> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("classification_centers[{i}]");
        let center_id = super::machinery::common::body_id(
            &format!("{field}.classification_center_id"),
            &item.classification_center_id,
        )?;
        if !seen.insert(center_id.clone()) {
            return Err(invalid(
                &field,
                "duplicate_center",
                "A classification center appears twice in the apportionment",
            ));
        }
        let percentage_bp = match &item.percentage {
            None => None,
            Some(p) => Some(Percent::parse(p).map(Percent::basis_points).map_err(|_| {
                invalid(
                    &format!("{field}.percentage"),
                    "invalid_value",
                    "percentage must be 0 to 100 with up to 2 decimals",
                )
            })?),
        };
        let amount = item.amount.map(Amount::cents);
        let from_percentage = percentage_bp.map(|bp| total.percentage(bp));
        let effective = match (amount, from_percentage) {
            (Some(a), Some(p)) if (a.0 - p.0).abs() > 1 => {
                return Err(unprocessable(
                    &field,
                    "allocation_mismatch",
                    "The percentage and the amount of an item disagree",
                ))
            }
            (Some(a), _) => a,
            (None, Some(p)) => p,
            (None, None) => {
                return Err(invalid(&field, "required", "Each item needs a percentage, an amount, or both"))
            }
        };
        out.push(Allocation { center_id, percentage_bp, amount, effective });
    }
    if let Err(sum) = adds_up(total, &out) {
        return Err(ApiError::new(ErrorCode::UnprocessableEntity, "The apportionment does not add up to the amount")
            .with_details(json!({ "field": "classification_centers", "reason": "allocation_sum", "expected": total, "actual": sum })));
    }
    Ok(out)
}

/// Every center exists in the company and matches the polarity.
pub async fn check(
    conn: &mut Conn,
    ws: &Membership,
    company: &CompanyRef,
    polarity: Polarity,
    items: &[Allocation],
) -> Result<(), ApiError> {
    for (i, item) in items.iter().enumerate() {
        refs::center(
            conn,
            ws,
            company,
            polarity,
            &format!("classification_centers[{i}].classification_center_id"),
            &item.center_id,
        )
        .await?;
    }
    Ok(())
}

/// Replaces the apportionment of a record (`owner_type` `transaction` or `billing`).
pub async fn replace(
    conn: &mut Conn,
    ws: &Membership,
    owner_type: &str,
    owner_id: &str,
    items: &[Allocation],
) -> Result<(), ApiError> {
    sql::query("DELETE FROM allocations WHERE owner_type = $1 AND owner_id = $2 AND workspace_id = $3")
        .bind(owner_type)
        .bind(owner_id)
        .bind(&ws.workspace_id)
        .execute(&mut *conn)
        .await?;
    for (position, item) in items.iter().enumerate() {
        sql::query(
            "INSERT INTO allocations (owner_type, owner_id, workspace_id, classification_center_id, position, percentage_bp, amount_cents)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(owner_type)
        .bind(owner_id)
        .bind(&ws.workspace_id)
        .bind(&item.center_id)
        .bind(position as i64)
        .bind(item.percentage_bp)
        .bind(item.amount.map(|a| a.0))
        .execute(&mut *conn)
        .await
        ?;
    }
    Ok(())
}

/// The apportionments of several records of one owner type, keyed by owner id, in
/// their stored order.
pub async fn read(
    conn: &mut Conn,
    ws: &Membership,
    owner_type: &str,
    owner_ids: &[String],
) -> Result<HashMap<String, Vec<AllocationView>>, ApiError> {
    let mut out: HashMap<String, Vec<AllocationView>> = HashMap::new();
    if owner_ids.is_empty() {
        return Ok(out);
    }
    let placeholders: Vec<String> = (0..owner_ids.len()).map(|i| format!("${}", i + 3)).collect();
    let sql = format!(
        "SELECT a.owner_id, a.classification_center_id, c.name, a.percentage_bp, a.amount_cents
           FROM allocations a JOIN classification_centers c ON c.id = a.classification_center_id
          WHERE a.workspace_id = $1 AND a.owner_type = $2 AND a.owner_id IN ({})
          ORDER BY a.owner_id, a.position",
        placeholders.join(", ")
    );
    let mut query = sql::query(sql).bind(&ws.workspace_id).bind(owner_type);
    for id in owner_ids {
        query = query.bind(id);
    }
    for row in query.fetch_all(&mut *conn).await? {
        let owner: String = row.try_get(0)?;
        let bp: Option<i64> = row.try_get(3)?;
        let cents: Option<i64> = row.try_get(4)?;
        out.entry(owner).or_default().push(AllocationView {
            classification_center_id: row.try_get(1)?,
            classification_center_name: row.try_get(2)?,
            percentage: bp.and_then(Percent::shown),
            amount: cents.map(Cents),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(p: Option<&str>, a: Option<&str>, n: u8) -> AllocationInput {
        AllocationInput {
            classification_center_id: format!("00000000-0000-4000-8000-0000000000{n:02}"),
            percentage: p.map(str::to_string),
            amount: a.map(|a| Amount(Cents::parse(a, false).unwrap())),
        }
    }

    #[test]
    fn apportionment_sums_to_the_amount_within_a_cent() {
        // 1000.00 as 70 % + R$ 300.00 (the reference's example).
        let out = resolve(Cents(100_000), &[item(Some("70"), None, 1), item(None, Some("300.00"), 2)]).unwrap();
        assert_eq!(out[0].effective, Cents(70_000));
        assert_eq!(out[1].effective, Cents(30_000));
        // Thirds of 100.00 round to 33.33 each: 99.99 is within R$ 0.01.
        assert!(resolve(
            Cents(10_000),
            &[item(Some("33.33"), None, 1), item(Some("33.33"), None, 2), item(Some("33.34"), None, 3)]
        )
        .is_ok());
        let err = resolve(Cents(10_000), &[item(Some("50"), None, 1), item(Some("40"), None, 2)]).unwrap_err();
        assert_eq!(err.details.unwrap()["reason"], "allocation_sum");
    }

    #[test]
    fn percentages_of_the_largest_amount_do_not_overflow() {
        // 9,999,999,999,999.99 (13 integer digits) × 10,000 basis points exceeds i64.
        let top = Cents(999_999_999_999_999);
        let out = resolve(top, &[item(Some("100"), None, 1)]).unwrap();
        assert_eq!(out[0].effective, top);
        let out = resolve(top, &[item(Some("50"), None, 1), item(Some("50"), None, 2)]).unwrap();
        assert_eq!(out[0].effective.0 + out[1].effective.0, top.0 + 1, "each half rounds up by half a cent");
    }

    #[test]
    fn apportionment_items_are_checked() {
        assert_eq!(resolve(Cents(100), &[item(None, None, 1)]).unwrap_err().details.unwrap()["reason"], "required");
        assert_eq!(
            resolve(Cents(100), &[item(Some("101"), None, 1)]).unwrap_err().details.unwrap()["reason"],
            "invalid_value"
        );
        assert_eq!(
            resolve(Cents(10_000), &[item(Some("50"), Some("10.00"), 1)]).unwrap_err().details.unwrap()["reason"],
            "allocation_mismatch"
        );
        assert_eq!(
            resolve(Cents(100), &[item(Some("50"), None, 1), item(Some("50"), None, 1)]).unwrap_err().details.unwrap()
                ["reason"],
            "duplicate_center"
        );
        assert!(resolve(Cents(100), &[]).unwrap().is_empty(), "[] clears");
    }
}
