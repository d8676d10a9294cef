//! Bills in the database: the list specs (filters and sorts of each kind), the row
//! mapping, the apportionment and tax charges read alongside, and the stored tax
//! charges and apportionment a write replaces or keeps.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::LazyLock;

use crate::kept::Kept;

use crate::storage::row::Decode;
use crate::storage::{sql, Conn, Row};

use super::coordinates;
use super::kind::BillKind;
use super::wire::{
    Billing, BillingRow, KindRecord, KindRow, PayableRowFields, ReceivableRowFields, ReconciliationRef, TaxCharge,
    TaxChargeInput,
};
use crate::domain::dates::Timestamp;

use crate::domain::money::Cents;
use crate::error::ApiError;
use crate::gateway::{ChargeStatus, RegistrationStatus};
use crate::ops::apportionment::{self, Allocation};
use crate::ops::machinery::common::{body_id, invalid, path_id};
use crate::ops::machinery::list::ListRequest;
use crate::ops::machinery::refs;
use crate::storage::identity::Membership;

/// A bill's column: the alias it is selected as, its expression, and how its value
/// goes into the record.
struct Column {
    alias: &'static str,
    expr: &'static str,
    set: fn(&mut BillingRow, &Row<'_>, usize) -> Result<(), crate::storage::Error>,
}

/// A column read into the bill member `slot`, as its type decodes.
fn put<T: Decode>(slot: &mut T, row: &Row<'_>, at: usize) -> Result<(), crate::storage::Error> {
    *slot = row.try_get(at)?;
    Ok(())
}

const fn column(
    alias: &'static str,
    expr: &'static str,
    set: fn(&mut BillingRow, &Row<'_>, usize) -> Result<(), crate::storage::Error>,
) -> Column {
    Column { alias, expr, set }
}

/// A bill's columns, in the order a `SELECT` lists them.
static COLUMNS: &[Column] = &[
    column("id", "billings.id", |b, row, at| put(&mut b.id, row, at)),
    column("company_id", "billings.company_id", |b, row, at| put(&mut b.company_id, row, at)),
    column("description", "billings.description", |b, row, at| put(&mut b.description, row, at)),
    column("amount_cents", "billings.amount_cents", |b, row, at| put(&mut b.amount, row, at)),
    column("interest_cents", "billings.interest_cents", |b, row, at| put(&mut b.interest_amount, row, at)),
    column("discount_cents", "billings.discount_cents", |b, row, at| put(&mut b.discount_amount, row, at)),
    column("ticket_cents", "billings.ticket_cents", |b, row, at| put(&mut b.ticket_amount, row, at)),
    column("due_date", "billings.due_date", |b, row, at| put(&mut b.due_date, row, at)),
    column("payment_date", "billings.payment_date", |b, row, at| put(&mut b.payment_date, row, at)),
    column("competence_date", "billings.competence_date", |b, row, at| put(&mut b.competence_date, row, at)),
    column("billing_type", "billings.billing_type", |b, row, at| put(&mut b.billing_type, row, at)),
    column("status", "billings.status", |b, row, at| put(&mut b.status, row, at)),
    column("recurrence_period", "billings.recurrence_period", |b, row, at| put(&mut b.recurrence_period, row, at)),
    column("person_id", "billings.person_id", |b, row, at| put(&mut b.person_id, row, at)),
    column("person_name", "people.name", |b, row, at| put(&mut b.person_name, row, at)),
    column("category_id", "billings.category_id", |b, row, at| put(&mut b.category_id, row, at)),
    column("category_name", "categories.name", |b, row, at| put(&mut b.category_name, row, at)),
    column("classification_center_id", "(SELECT a.classification_center_id FROM allocations a WHERE a.owner_type = 'billing' AND a.workspace_id = billings.workspace_id AND a.owner_id = billings.id AND a.position = 0)", |b, row, at| put(&mut b.classification_center_id, row, at)),
    column("classification_center_name", "(SELECT c.name FROM allocations a JOIN classification_centers c ON c.id = a.classification_center_id WHERE a.owner_type = 'billing' AND a.workspace_id = billings.workspace_id AND a.owner_id = billings.id AND a.position = 0)", |b, row, at| put(&mut b.classification_center_name, row, at)),
    column("financial_account_id", "billings.financial_account_id", |b, row, at| put(&mut b.financial_account_id, row, at)),
    column("expected_account_id", "billings.expected_account_id", |b, row, at| put(&mut b.expected_account_id, row, at)),
    column("payment_method_kind", "billings.payment_method_kind", |b, row, at| put(&mut b.payment_method_kind, row, at)),
    column("document", "billings.document", |b, row, at| put(&mut b.document, row, at)),
    column("document_number", "billings.document_number", |b, row, at| put(&mut b.document_number, row, at)),
    column("document_date", "billings.document_date", |b, row, at| put(&mut b.document_date, row, at)),
    column("installment_number", "billings.installment_number", |b, row, at| put(&mut b.installment_number, row, at)),
    column("total_installments", "billings.total_installments", |b, row, at| put(&mut b.total_installments, row, at)),
    column("parcels_cents", "CAST((SELECT SUM(s.amount_cents) FROM billings s WHERE s.workspace_id = billings.workspace_id AND s.group_id = billings.group_id) AS BIGINT)", |b, row, at| put(&mut b.parcels_amount, row, at)),
    column("group_id", "billings.group_id", |b, row, at| put(&mut b.group_id, row, at)),
    column("transaction_id", "billings.transaction_id", |b, row, at| put(&mut b.transaction_id, row, at)),
    column("ir_relevant", "billings.ir_relevant", |b, row, at| put(&mut b.ir_relevant, row, at)),
    column("operation_kind", "billings.operation_kind", |b, row, at| {
        // Only a payable holds one: a value makes the row a payable's.
        if let Some(kind) = row.try_get::<Option<String>, _>(at)? {
            let mut fields = match b.kind.take() {
                Some(KindRow::Payable(fields)) => fields,
                _ => PayableRowFields::default(),
            };
            fields.operation_kind = Some(kind);
            b.kind = Some(KindRow::Payable(fields));
        }
        Ok(())
    }),
    column("payment_approval", "billings.payment_approval", |b, row, at| {
        // Only a payable holds one: a value makes the row a payable's.
        if let Some(approval) = row.try_get::<Option<String>, _>(at)? {
            let mut fields = match b.kind.take() {
                Some(KindRow::Payable(fields)) => fields,
                _ => PayableRowFields::default(),
            };
            fields.payment_approval = Some(approval);
            b.kind = Some(KindRow::Payable(fields));
        }
        Ok(())
    }),
    column("kobana_charge_kind", "rc.kind", |b, row, at| {
        charged(b, row.try_get::<Option<String>, _>(at)?, |f, v| f.kobana_charge_kind = Some(v));
        Ok(())
    }),
    column("kobana_charge_uid", "rc.charge_uid", |b, row, at| {
        charged(b, row.try_get::<Option<String>, _>(at)?, |f, v| f.kobana_charge_uid = Some(v));
        Ok(())
    }),
    column("kobana_status", "rc.status", |b, row, at| {
        charged(b, row.try_get::<Option<String>, _>(at)?, |f, v| f.kobana_status = Some(v));
        Ok(())
    }),
    column("kobana_registration_status", "rc.registration_status", |b, row, at| {
        charged(b, row.try_get::<Option<String>, _>(at)?, |f, v| f.kobana_registration_status = Some(v));
        Ok(())
    }),
    column("kobana_status_updated_at", "rc.status_updated_at", |b, row, at| {
        charged(b, row.try_get::<Option<Timestamp>, _>(at)?, |f, v| f.kobana_status_updated_at = Some(v));
        Ok(())
    }),
    column("is_reconciled", "(CASE WHEN EXISTS (SELECT 1 FROM reconciliation_members m WHERE m.workspace_id = billings.workspace_id AND m.member_type = 'billing' AND m.member_id = billings.id) THEN 1 ELSE 0 END)", |b, row, at| put(&mut b.is_reconciled, row, at)),
    column("notes", "billings.notes", |b, row, at| put(&mut b.notes, row, at)),
    column("tax_charges_count", "(SELECT COUNT(*) FROM billing_tax_charges t WHERE t.workspace_id = billings.workspace_id AND t.billing_id = billings.id)", |b, row, at| put(&mut b.tax_charges_count, row, at)),
    column("classification_center_allocations_count", "(SELECT COUNT(*) FROM allocations a WHERE a.owner_type = 'billing' AND a.workspace_id = billings.workspace_id AND a.owner_id = billings.id)", |b, row, at| put(&mut b.classification_center_allocations_count, row, at)),
    column("attachments_count", "(SELECT COUNT(*) FROM attachment_links l WHERE l.workspace_id = billings.workspace_id AND l.target_type = billings.kind AND l.target_id = billings.id)", |b, row, at| put(&mut b.attachments_count, row, at)),
    column("created_at", "billings.created_at", |b, row, at| put(&mut b.stamps.created_at, row, at)),
    column("updated_at", "billings.updated_at", |b, row, at| put(&mut b.stamps.updated_at, row, at)),
    column("created_via", "billings.created_via", |b, row, at| put(&mut b.stamps.created_via, row, at)),
    column("updated_via", "billings.updated_via", |b, row, at| put(&mut b.stamps.updated_via, row, at)),
    column("created_by", "billings.created_by", |b, row, at| put(&mut b.stamps.created_by, row, at)),
    column("updated_by", "billings.updated_by", |b, row, at| put(&mut b.stamps.updated_by, row, at)),
];

/// The alias of the bill column `name`, if it is one.
pub fn column_alias(name: &str) -> Option<&'static str> {
    COLUMNS.iter().find(|c| c.alias == name).map(|c| c.alias)
}

/// How a wire field is read from a bill's columns.
#[derive(Clone, Copy)]
pub enum Wire {
    /// Text or null, as stored.
    Text(&'static str),
    /// A flag stored as 0 or 1, or null.
    Bool(&'static str),
    /// An integer or null.
    Integer(&'static str),
    /// Cents or null, as the money string.
    Money(&'static str),
    /// amount + interest − discount.
    Nominal,
}

/// How `field` is read from the row; `None` for what is not in it (the apportionment and
/// the tax charges, read apart by [`attach`]) and for a name a bill does not have.
pub fn wire_of(field: &str) -> Option<Wire> {
    Some(match field {
        "amount" => Wire::Money("amount_cents"),
        "interest_amount" => Wire::Money("interest_cents"),
        "discount_amount" => Wire::Money("discount_cents"),
        "ticket_amount" => Wire::Money("ticket_cents"),
        "parcels_amount" => Wire::Money("parcels_cents"),
        "nominal_amount" => Wire::Nominal,
        "type" => Wire::Text("billing_type"),
        "installment_number" => Wire::Integer("installment_number"),
        "total_installments" => Wire::Integer("total_installments"),
        "tax_charges_count" | "classification_center_allocations_count" | "attachments_count" => {
            Wire::Integer(column_alias(field)?)
        }
        "ir_relevant" | "is_reconciled" => Wire::Bool(column_alias(field)?),
        "classification_center_allocations" | "tax_charges" | "reconciliation" => return None,
        // Every other member is the column of its own name.
        other => Wire::Text(column_alias(other)?),
    })
}

/// The columns a wire field is read from.
fn columns_of(field: &str) -> &'static [&'static str] {
    const NOMINAL: &[&str] = &["amount_cents", "interest_cents", "discount_cents"];
    match wire_of(field) {
        Some(Wire::Text(alias) | Wire::Bool(alias) | Wire::Integer(alias) | Wire::Money(alias)) => {
            COLUMNS.iter().find(|c| c.alias == alias).map_or(&[], |c| std::slice::from_ref(&c.alias))
        }
        Some(Wire::Nominal) => NOMINAL,
        None => &[],
    }
}

/// Sets a field of a receivable's charge from its column, where it has a value (only a
/// charged receivable's row does): the value makes the row a receivable's.
fn charged<T>(b: &mut BillingRow, value: Option<T>, set: impl FnOnce(&mut ReceivableRowFields, T)) {
    let Some(value) = value else { return };
    let mut fields = match b.kind.take() {
        Some(KindRow::Receivable(fields)) => fields,
        _ => ReceivableRowFields::default(),
    };
    set(&mut fields, value);
    b.kind = Some(KindRow::Receivable(fields));
}

/// The aliases of a receivable's charge columns (read through the `rc` join).
const CHARGE_ALIASES: [&str; 5] = [
    "kobana_charge_kind",
    "kobana_charge_uid",
    "kobana_status",
    "kobana_registration_status",
    "kobana_status_updated_at",
];

/// `SELECT … FROM billings` with every column of a bill.
pub static SELECT: LazyLock<String> = LazyLock::new(|| select(|_| true));

/// `SELECT … FROM billings` with the columns `wanted` keeps, and the joins they need.
fn select(wanted: impl Fn(&str) -> bool) -> String {
    let columns: Vec<String> =
        COLUMNS.iter().filter(|c| wanted(c.alias)).map(|c| format!("{} AS {}", c.expr, c.alias)).collect();
    let mut sql = format!("SELECT {} FROM billings", columns.join(", "));
    if wanted("person_name") {
        sql.push_str(" LEFT JOIN people ON people.id = billings.person_id");
    }
    if wanted("category_name") {
        sql.push_str(" LEFT JOIN categories ON categories.id = billings.category_id");
    }
    if CHARGE_ALIASES.iter().any(|alias| wanted(alias)) {
        sql.push_str(
            " LEFT JOIN receivable_charges rc ON rc.workspace_id = billings.workspace_id AND rc.billing_id = billings.id \
             AND rc.current = 1",
        );
    }
    sql
}

/// The `SELECT` of a list page: with `fields`, only what those fields are read from,
/// the id and the sort column (the cursor's); without, every column.
pub fn select_for(request: &ListRequest, sort_column: &str) -> Arc<str> {
    static SELECTS: Kept<u64, Arc<str>> = Kept::new(128);
    let (sort_alias, _) = crate::ops::machinery::list::sorted_column(sort_column);
    let bit = |alias: &str| COLUMNS.iter().position(|c| c.alias == alias).map_or(0, |at| 1u64 << at);
    let columns = match &request.fields {
        None => u64::MAX,
        Some(fields) => fields
            .iter()
            .flat_map(|f| columns_of(f))
            .chain([&"id", &sort_alias])
            .fold(0, |mask, alias| mask | bit(alias)),
    };
    SELECTS.get(columns, || {
        Arc::from(select(|alias| {
            COLUMNS.iter().position(|c| c.alias == alias).is_some_and(|at| columns & 1 << at != 0)
        }))
    })
}

/// A bill from its row, read in one pass over the columns the statement selected (in
/// [`COLUMNS`] order, as [`select`] writes them). A list read with `fields` selects only
/// the columns those fields need; the rest of the record keeps its default and is never
/// shown.
pub fn from_row(row: &Row<'_>) -> Result<BillingRow, crate::storage::Error> {
    let mut b = BillingRow::default();
    let mut next = 0;
    for at in 0..row.column_count() {
        let name = row.column_name(at);
        let found = COLUMNS[next..]
            .iter()
            .position(|c| c.alias == name)
            .ok_or_else(|| crate::storage::Error::Corrupt(format!("unexpected bill column {name}")))?;
        let column = &COLUMNS[next + found];
        (column.set)(&mut b, row, at)?;
        next += found + 1;
    }
    b.nominal_amount = Cents::nominal(b.amount, b.interest_amount, b.discount_amount);
    if let Some(KindRow::Receivable(fields)) = &mut b.kind {
        if let Some(status) = &fields.kobana_status {
            let registration = fields.kobana_registration_status.as_deref().map(RegistrationStatus::from);
            let state = super::charges::charge_state(&ChargeStatus::from(status.as_str()), registration.as_ref());
            fields.charge_state = Some(state.to_string());
        }
    }
    Ok(b)
}

/// A row of kind `B`, with the kind's own fields (those its columns filled, else the
/// kind's defaults).
pub fn of_kind<B: BillKind>(mut row: BillingRow) -> BillingRow {
    row.kind.get_or_insert_with(B::row_fields);
    row
}

/// The record of a row of kind `B`: its apportionment and its tax charges, read beside
/// it, and the kind's own fields.
async fn attach<B: BillKind>(conn: &mut Conn, ws: &Membership, row: BillingRow) -> Result<Billing, ApiError> {
    let ids = std::slice::from_ref(&row.id);
    let allocations = apportionment::read(conn, ws, "billing", ids).await?.remove(&row.id).unwrap_or_default();
    let tax_charges = tax_charges_of(conn, ws, ids).await?.remove(&row.id).unwrap_or_default();
    let mut kind = B::fields();
    if let KindRecord::Payable(fields) = &mut kind {
        *fields.coordinates = coordinates::read(conn, ws, &row.id).await?;
        if row.payment_approval().is_some() {
            let trail = super::approval::trail(conn, ws, &row.id).await?;
            (fields.approved_at, fields.rejected_at, fields.rejection_reason) = trail;
        }
        if let Some(dispatch) = super::dispatch::of(conn, ws, &row.id).await? {
            fields.kobana_payment_uid = Some(dispatch.payment_uid);
            fields.kobana_status = Some(dispatch.status.as_str().to_string());
            fields.kobana_status_updated_at = Some(dispatch.status_updated_at);
        }
    }
    if let KindRecord::Receivable(fields) = &mut kind {
        let charged = matches!(&row.kind, Some(KindRow::Receivable(f)) if f.kobana_charge_uid.is_some());
        if let Some(charge) = charged.then_some(()).and(super::charges::current(conn, ws, &row.id).await?) {
            fields.kobana_charge_id = charge.charge_id;
            fields.kobana_charge_url = charge.url;
            fields.kobana_barcode = charge.barcode;
            fields.kobana_digitable_line = charge.digitable_line;
            fields.kobana_pix_qrcode = charge.pix_qrcode;
        }
    }
    // The row already says whether a group holds it: only then is the group read.
    let group = match row.is_reconciled {
        true => crate::ops::reconciliations::group_of(conn, ws, "billing", &row.id).await?,
        false => None,
    };
    let reconciliation = group.map(|group| ReconciliationRef {
        id: group.id,
        source: group.source,
        transaction_ids: group.transaction_ids,
        billing_ids: group.billing_ids,
    });
    Ok(Billing {
        row: of_kind::<B>(row),
        classification_center_allocations: allocations,
        tax_charges,
        reconciliation,
        attachments: None,
        kind: Some(kind),
    })
}

async fn tax_charges_of(
    conn: &mut Conn,
    ws: &Membership,
    ids: &[String],
) -> Result<HashMap<String, Vec<TaxCharge>>, ApiError> {
    let placeholders: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "SELECT c.billing_id, c.tax_id, t.name, c.amount_cents, c.withholding
           FROM billing_tax_charges c JOIN taxes t ON t.id = c.tax_id
          WHERE c.workspace_id = $1 AND c.billing_id IN ({})
          ORDER BY c.billing_id, t.name, c.tax_id",
        placeholders.join(", ")
    );
    let mut query = sql::query(sql).bind(&ws.workspace_id);
    for id in ids {
        query = query.bind(id);
    }
    let mut out: HashMap<String, Vec<TaxCharge>> = HashMap::new();
    for row in query.fetch_all(&mut *conn).await? {
        let billing: String = row.try_get(0)?;
        let cents: i64 = row.try_get(3)?;
        let withholding: i64 = row.try_get(4)?;
        out.entry(billing).or_default().push(TaxCharge {
            tax_id: row.try_get(1)?,
            tax_name: row.try_get(2)?,
            amount: Cents(cents),
            withholding: withholding != 0,
        });
    }
    Ok(out)
}

/// The record `id` of kind `B` in the workspace, with its apportionment and taxes (404
/// otherwise).
pub async fn find<B: BillKind>(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Billing, ApiError> {
    let id = path_id(id, B::NOUN)?;
    let row =
        sql::query(format!("{} WHERE billings.workspace_id = $1 AND billings.kind = $2 AND billings.id = $3", *SELECT))
            .bind(&ws.workspace_id)
            .bind(B::KIND)
            .bind(&id)
            .map_optional(&mut *conn, from_row)
            .await?;
    attach::<B>(conn, ws, row.ok_or_else(|| ApiError::not_found(B::NOUN))?).await
}

/// The stored apportionment of a record, as items.
pub async fn stored_allocations(conn: &mut Conn, ws: &Membership, owner_id: &str) -> Result<Vec<Allocation>, ApiError> {
    let rows = sql::query(
        "SELECT classification_center_id, percentage_bp, amount_cents FROM allocations
          WHERE workspace_id = $1 AND owner_type = 'billing' AND owner_id = $2 ORDER BY position",
    )
    .bind(&ws.workspace_id)
    .bind(owner_id)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter()
        .map(|r| {
            let bp: Option<i64> = r.try_get(1)?;
            let cents: Option<i64> = r.try_get(2)?;
            Ok(Allocation {
                center_id: r.try_get(0)?,
                percentage_bp: bp,
                amount: cents.map(Cents),
                effective: Cents(cents.unwrap_or(0)),
            })
        })
        .collect::<Result<Vec<_>, crate::storage::Error>>()
        .map_err(ApiError::from)
}

/// Checked tax charges: `(tax_id, cents, withholding)`.
pub async fn requested_taxes(
    conn: &mut Conn,
    ws: &Membership,
    items: &[TaxChargeInput],
) -> Result<Vec<(String, Cents, bool)>, ApiError> {
    let mut out: Vec<(String, Cents, bool)> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("tax_charges[{i}]");
        let tax_id = body_id(&format!("{field}.tax_id"), &item.tax_id)?;
        if out.iter().any(|(t, _, _)| *t == tax_id) {
            return Err(invalid(&field, "duplicate_tax", "A tax appears twice in tax_charges"));
        }
        let tax_id = refs::tax(conn, ws, &format!("{field}.tax_id"), &tax_id).await?;
        out.push((tax_id, item.amount.cents(), item.withholding.unwrap_or(true)));
    }
    Ok(out)
}

pub async fn replace_taxes(
    conn: &mut Conn,
    ws: &Membership,
    billing_id: &str,
    taxes: &[(String, Cents, bool)],
) -> Result<(), ApiError> {
    sql::query("DELETE FROM billing_tax_charges WHERE workspace_id = $1 AND billing_id = $2")
        .bind(&ws.workspace_id)
        .bind(billing_id)
        .execute(&mut *conn)
        .await?;
    for (tax_id, amount, withholding) in taxes {
        sql::query("INSERT INTO billing_tax_charges (billing_id, workspace_id, tax_id, amount_cents, withholding) VALUES ($1, $2, $3, $4, $5)")
            .bind(billing_id)
            .bind(&ws.workspace_id)
            .bind(tax_id)
            .bind(amount.0)
            .bind(*withholding as i64)
            .execute(&mut *conn)
            .await
            ?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list `SELECT` is kept by its set of columns, as bits of a `u64`; every wire
    /// field a list can be asked for is read from columns of the table.
    #[test]
    fn the_columns_fit_the_set_of_selected_columns() {
        assert!(COLUMNS.len() <= 64);
        let aliases: Vec<&str> = COLUMNS.iter().map(|c| c.alias).collect();
        for field in ["amount", "nominal_amount", "type", "parcels_amount", "person_name", "status", "updated_by"] {
            assert!(!columns_of(field).is_empty() && columns_of(field).iter().all(|c| aliases.contains(c)), "{field}");
        }
    }
}
