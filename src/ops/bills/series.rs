//! What a create writes: the shape of the series (one record, installments or
//! recurrences), the rows with their amounts, dates and apportionment, and the
//! apportionment a request asks for.

use crate::storage::Conn;

use super::wire::BillingCreate;
use crate::domain::apportionment::{spread, Allocation};
use crate::domain::bills::{BillType, INSTALLMENTS, RECURRENCE_HORIZON};
use crate::domain::dates::{Date, Step};
use crate::domain::money::{Amount, Cents};
use crate::domain::names::Name;
use crate::domain::percent::Percent;
use crate::error::ApiError;
use crate::ops::apportionment::{self, AllocationInput};
use crate::ops::machinery::common::{invalid, unprocessable};

/// One row of a series to insert.
pub struct NewRow {
    pub id: String,
    pub amount: Cents,
    pub due_date: Date,
    pub competence_date: Date,
    pub installment_number: Option<i64>,
    pub total_installments: Option<i64>,
    pub allocations: Vec<Allocation>,
}

fn needs(field: &str, what: &str) -> ApiError {
    unprocessable(field, "not_allowed", &format!("{field} needs type {what}"))
}

/// How many records the create writes, and how far apart.
pub fn shape(input: &BillingCreate, billing_type: BillType, amount: Cents) -> Result<(i64, Step), ApiError> {
    match billing_type {
        BillType::Normal => {
            if input.total_installments.is_some() {
                return Err(needs("total_installments", "installment"));
            }
            if input.recurrence_period.is_some() {
                return Err(needs("recurrence_period", "recurring"));
            }
            Ok((1, Step::Months(1)))
        }
        BillType::Installment => {
            if input.recurrence_period.is_some() {
                return Err(needs("recurrence_period", "recurring"));
            }
            match input.total_installments {
                None => Err(unprocessable(
                    "total_installments",
                    "required",
                    "type installment needs total_installments (2 to 120)",
                )),
                Some(n) if !INSTALLMENTS.contains(&n) => Err(unprocessable(
                    "total_installments",
                    "out_of_range",
                    "total_installments must be between 2 and 120",
                )),
                Some(n) if amount.0 < n => Err(unprocessable(
                    "amount",
                    "amount_too_small",
                    "The amount cannot be split into that many installments",
                )),
                Some(n) => Ok((n, Step::Months(1))),
            }
        }
        BillType::Recurring => {
            if input.total_installments.is_some() {
                return Err(needs("total_installments", "installment"));
            }
            match input.recurrence_period {
                None => Err(unprocessable("recurrence_period", "required", "type recurring needs recurrence_period")),
                Some(period) => Ok((RECURRENCE_HORIZON as i64, period.step())),
            }
        }
    }
}

/// The rows of the series: installments split the amount (and spread the
/// apportionment over the parcels), recurrences repeat both.
pub fn rows(
    input: &BillingCreate,
    billing_type: BillType,
    amount: Cents,
    (count, step): (i64, Step),
    allocations: &[Allocation],
) -> Result<Vec<NewRow>, ApiError> {
    let competence = input.competence_date.unwrap_or(input.due_date);
    let amounts = match billing_type {
        BillType::Installment => amount.split(count),
        _ => vec![amount; count as usize],
    };
    let spread_allocations = match billing_type {
        BillType::Installment => spread(allocations, amount, &amounts, true),
        _ => vec![allocations.to_vec(); count as usize],
    };
    let out_of_range =
        || unprocessable("due_date", "out_of_range", "The series runs past the supported dates (up to 2999-12-31)");
    let mut rows = Vec::with_capacity(count as usize);
    for (index, (parcel, allocations)) in amounts.iter().zip(spread_allocations).enumerate() {
        let number = index as i64;
        let (installment_number, total_installments) = match billing_type {
            BillType::Normal => (None, None),
            _ => (Some(number + 1), Some(count)),
        };
        rows.push(NewRow {
            id: uuid::Uuid::new_v4().to_string(),
            amount: *parcel,
            due_date: input.due_date.step(step, number).ok_or_else(out_of_range)?,
            competence_date: competence.step(step, number).ok_or_else(out_of_range)?,
            installment_number,
            total_installments,
            allocations,
        });
    }
    Ok(rows)
}

/// Stored items as request items, to check them against a new amount.
pub fn as_inputs(items: &[Allocation]) -> Vec<AllocationInput> {
    items
        .iter()
        .map(|a| AllocationInput {
            classification_center_id: a.center_id.clone(),
            percentage: a.percentage_bp.and_then(Percent::shown),
            amount: a.amount.map(Amount),
        })
        .collect()
}

/// A request's apportionment as sent: `classification_centers[]`, or the single-center
/// shorthand by id or by name.
pub struct Centers<'a> {
    pub items: Option<&'a [AllocationInput]>,
    pub id: Option<&'a str>,
    pub name: Option<&'a str>,
}

impl<'a> Centers<'a> {
    /// A request's `classification_centers`, `classification_center_id` and
    /// `classification_center_name`.
    pub fn of(items: &'a Option<Vec<AllocationInput>>, id: &'a Option<String>, name: &'a Option<Name>) -> Centers<'a> {
        Centers { items: items.as_deref(), id: id.as_deref(), name: name.as_deref() }
    }
}

/// The apportionment of a request ([`Centers`]), checked against `amount` and the
/// polarity (the shorthand takes 100 %). `None`: not sent.
pub async fn requested_allocations(
    owner: &crate::ops::registers::Owner<'_, '_>,
    conn: &mut Conn,
    amount: Cents,
    sent: Centers<'_>,
) -> Result<Option<Vec<Allocation>>, ApiError> {
    let Centers { items, id: center_id, name: center_name } = sent;
    if items.is_some() && (center_id.is_some() || center_name.is_some()) {
        return Err(invalid(
            "classification_center_id",
            "mutually_exclusive",
            "classification_center_id/classification_center_name and classification_centers are mutually exclusive",
        ));
    }
    if let Some(items) = items {
        let resolved = apportionment::resolve(amount, items)?;
        apportionment::check(conn, owner.ws, owner.company, owner.polarity, &resolved).await?;
        return Ok(Some(resolved));
    }
    match owner.center(conn, center_id, center_name).await? {
        Some(center) => Ok(Some(vec![Allocation::whole(center, amount)])),
        None => Ok(None),
    }
}
