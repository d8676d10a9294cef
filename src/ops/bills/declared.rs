//! The payables and receivables as declared resources: [`Bills`] names their
//! operations in `ops::bills` (one implementation for both kinds, the [`BillKind`]
//! parameter says which; their create and update, `Writable`, are written there with
//! the rules), and [`PAYABLES`] / [`RECEIVABLES`] are their `/v1` tables.
//! Kept apart from the billing rules themselves so each file changes for one reason.

use crate::storage::Conn;

use super::charges::{ChargeKind, ChargeRequest};
use super::{
    check_transition, settlement_account, BillKind, Billing, BillingPatch, BillingRow, For, Of, Payable, Receivable,
    SettleRequest, Transition,
};
use crate::domain::money::Cents;
use crate::domain::roles::Resource;
use crate::error::ApiError;
use crate::gateway::PaymentKind;
use crate::ops::accounts::Accounts;
use crate::ops::list::{ListRequest, ListSpec};
use crate::ops::period::AggregatesQuery;
use crate::ops::resource::{
    joined, label_of, parse, peek, reply, Asking, Call, Declaration, Deletable, Op, Records, Running, Tool,
};
use crate::ops::validate::schema_of;
use crate::ops::{IdPage, OpContext, Page};
use crate::storage::identity::Membership;

/// The payables or the receivables, as a resource.
pub struct Bills<B>(std::marker::PhantomData<B>);

pub type Payables = Bills<Payable>;
pub type Receivables = Bills<Receivable>;

impl<B: BillKind> Records for Bills<B> {
    const RESOURCE: Resource = B::RESOURCE;
    const COLLECTION: &'static str = B::COLLECTION;
    const NOUN: &'static str = B::KIND;
    type Row = Of<B, BillingRow>;
    type Record = Of<B, Billing>;
    const LIST: &'static ListSpec = B::LIST;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Of<B, BillingRow>>, ApiError> {
        super::list::<B>(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Of<B, Billing>, ApiError> {
        super::get::<B>(ctx, conn, ws, id).await.map(Of::new)
    }
    async fn list_written(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Option<Vec<u8>>, ApiError> {
        super::written::list::<B>(ctx, conn, ws, request).await
    }
    fn label(of: &Of<B, Billing>) -> String {
        label::<B>(&of.0)
    }
}

impl<B: BillKind> Deletable for Bills<B> {
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        super::delete::<B>(ctx, conn, ws, id).await
    }
    async fn refused(conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        let id = crate::ops::common::path_id(id, B::NOUN)?;
        crate::ops::reconciliations::refuse_if_reconciled(conn, ws, "billing", &id, "deleted").await?;
        match B::KIND {
            "payable" => super::dispatch::refuse_if_dispatched(conn, ws, &id, "deleted").await?,
            _ => super::charges::refuse_if_charged(conn, ws, &id, "deleted").await?,
        }
        Ok(())
    }
}

/// A bill in the user's terms, for a confirmation.
fn label<B: BillKind>(bill: &Billing) -> String {
    let counterparty = match &bill.row.person_name {
        Some(name) => format!(" {} {name}", B::COUNTERPARTY),
        None => String::new(),
    };
    format!("“{}”{counterparty} ({}, due {})", bill.row.description, bill.row.amount.brl(), bill.row.due_date)
}

fn aggregates<B: BillKind>() -> serde_json::Value {
    super::aggregates_schema(B::SETTLED.as_str())
}

fn run_aggregates<B: BillKind>(c: Call<'_>) -> Running<'_> {
    Box::pin(super::aggregates::<B>(c.ctx, c.conn, c.ws, c.query))
}

fn run_ids<B: BillKind>(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(super::ids::<B>(c.ctx, c.conn, c.ws, c.query).await?) })
}

fn run_patch<B: BillKind>(c: Call<'_>) -> Running<'_> {
    Box::pin(async move {
        let input: For<B, BillingPatch<B::Status>> = parse(c.body.clone())?;
        let input = input.0;
        reply(super::patch::<B>(c.ctx, c.conn, c.ws, c.id, &c.body, input).await?)
    })
}

fn run_settle<B: BillKind>(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(super::settle::<B>(c.ctx, c.conn, c.ws, c.id, parse(c.body)?).await?) })
}

fn run_cancel<B: BillKind>(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(super::cancel::<B>(c.ctx, c.conn, c.ws, c.id).await?) })
}

fn run_reopen<B: BillKind>(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(super::reopen::<B>(c.ctx, c.conn, c.ws, c.id).await?) })
}

fn confirm_settle<B: BillKind>(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, id, body, .. } = c;
        let input: SettleRequest = parse(body)?;
        let (label, amount, account) = match peek::<Bills<B>>(ctx, conn, ws, id).await?.map(|of| of.0) {
            Some(bill) => {
                check_transition(bill.row.status, Transition::Settle)?;
                let moved = match input.amounts.ticket_amount {
                    Some(ticket) => ticket.cents(),
                    None => Cents::nominal(
                        bill.row.amount,
                        input.amounts.interest_amount.map(|a| a.cents()),
                        input.amounts.discount_amount.map(|a| a.cents()),
                    ),
                };
                let account = settlement_account(
                    input.financial_account_id.as_deref(),
                    bill.row.financial_account_id.as_deref(),
                )?;
                (label::<B>(&bill), Some(moved.brl()), Some(account.to_string()))
            }
            None => (
                id.to_string(),
                input.amounts.ticket_amount.map(|a| a.cents().brl()),
                input.financial_account_id.clone(),
            ),
        };
        let account = match account {
            Some(id) => format!(" {} the account {}", B::ACCOUNT, label_of::<Accounts>(ctx, conn, ws, &id).await?),
            None => String::new(),
        };
        let amount = amount.map(|a| format!(" of {a}")).unwrap_or_default();
        Ok(format!(
            "Settle the {} {label}? This records a {}{amount} on {}{account}.",
            B::KIND,
            B::SETTLEMENT,
            input.payment_date
        ))
    })
}

fn confirm_cancel<B: BillKind>(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, id, .. } = c;
        let label = match peek::<Bills<B>>(ctx, conn, ws, id).await?.map(|of| of.0) {
            Some(bill) => {
                check_transition(bill.row.status, Transition::Cancel)?;
                label::<B>(&bill)
            }
            None => id.to_string(),
        };
        Ok(format!("Cancel the {} {label}? It will no longer be expected to be {}.", B::KIND, B::SETTLED.as_str()))
    })
}

fn confirm_reopen<B: BillKind>(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, id, .. } = c;
        let Some(bill) = peek::<Bills<B>>(ctx, conn, ws, id).await?.map(|of| of.0) else {
            return Ok(format!("Reopen the {} {}? It becomes pending again.", B::KIND, id));
        };
        check_transition(bill.row.status, Transition::Reopen)?;
        crate::ops::reconciliations::refuse_if_reconciled(conn, ws, "billing", &bill.row.id, "reopened").await?;
        let label = label::<B>(&bill);
        let settlement = match (&bill.row.payment_date, &bill.row.financial_account_id) {
            (Some(date), Some(account)) if bill.row.status == B::SETTLED => {
                let moved = bill.row.ticket_amount.unwrap_or(bill.row.nominal_amount);
                format!(
                    " Its {} of {} on {date} is removed from the account {}.",
                    B::SETTLEMENT,
                    moved.brl(),
                    label_of::<Accounts>(ctx, conn, ws, account).await?
                )
            }
            _ => String::new(),
        };
        Ok(format!(
            "Reopen the {} {} {label}? It becomes pending again.{settlement}",
            bill.row.status.as_str(),
            B::KIND
        ))
    })
}

/// What an agent reads of each tool of one kind, in catalogue order.
pub struct BillTools {
    pub list: Tool,
    pub get: Tool,
    pub create: Tool,
    pub update: Tool,
    pub delete: Tool,
    pub aggregates: Tool,
    pub settle: Tool,
    pub cancel: Tool,
    pub reopen: Tool,
}

/// A kind's tools: the texts of payables and of receivables differ (a vendor is paid, a
/// customer's payment received), their rows do not.
pub trait Declared: BillKind {
    const TOOLS: BillTools;
}

impl Declared for Payable {
    const TOOLS: BillTools = BillTools {
        list: Tool {
            name: "finance_payables_list",
            title: "List payables",
            description: "Lists bills to pay. Filters: a value or operators, e.g. overdue: \
{\"status\":\"pending\",\"due_date\":{\"lt\":\"2026-11-30\"}}; person_id is the vendor, group_id a series. \
For totals use finance_payables_aggregates.",
        },
        get: Tool {
            name: "finance_payables_get",
            title: "Get a payable",
            description: "One payable: vendor, amounts, dates, status, category, apportionment, taxes and its settlement transaction.",
        },
        create: Tool {
            name: "finance_payables_create",
            title: "Create a payable",
            description: "Records a bill to pay, pending. person_name/category_name find or create; type installment splits it into \
monthly parcels, recurring repeats it. Pay it with finance_payables_settle. Where the approval gate is on it waits for a \
person's approval (payment_approval pending_approval: listed only with that filter).",
        },
        update: Tool {
            name: "finance_payables_update",
            title: "Update a payable",
            description: "Changes the fields sent of a pending payable; null clears a field. Never the status: use _settle, _cancel or \
_reopen.",
        },
        delete: Tool {
            name: "finance_payables_delete",
            title: "Delete a payable",
            description: "Deletes a pending or cancelled payable (reopen a paid one first). Asks the user to confirm.",
        },
        aggregates: Tool {
            name: "finance_payables_aggregates",
            title: "Payable totals",
            description: "Totals of payables (count, total, pending, paid, overdue_count) for a month, a due-date range or all time. \
Use it when the question is how much.",
        },
        settle: Tool {
            name: "finance_payables_settle",
            title: "Pay a payable",
            description: "Pays a pending payable: records the debit in the ledger from financial_account_id (unless the payable names \
one). Moves money: asks the user to confirm.",
        },
        cancel: Tool {
            name: "finance_payables_cancel",
            title: "Cancel a payable",
            description: "Cancels a pending payable; it stays in the history (finance_payables_reopen undoes it). Asks the user to \
confirm.",
        },
        reopen: Tool {
            name: "finance_payables_reopen",
            title: "Reopen a payable",
            description: "Makes a paid or cancelled payable pending again; a payment's ledger transaction is removed. Asks the user to \
confirm.",
        },
    };
}

impl Declared for Receivable {
    const TOOLS: BillTools = BillTools {
        list: Tool {
            name: "finance_receivables_list",
            title: "List receivables",
            description: "Lists what customers owe. Filters: a value or operators, e.g. late: \
{\"status\":\"pending\",\"due_date\":{\"lt\":\"2026-11-30\"}}; person_id is the customer. For totals use \
finance_receivables_aggregates.",
        },
        get: Tool {
            name: "finance_receivables_get",
            title: "Get a receivable",
            description: "One receivable: customer, amounts, dates, status, category, apportionment, taxes and its settlement \
transaction.",
        },
        create: Tool {
            name: "finance_receivables_create",
            title: "Create a receivable",
            description: "Records an amount to receive, pending. person_name/category_name find or create; type installment splits it \
into monthly parcels, recurring repeats it. Record the receipt with finance_receivables_settle.",
        },
        update: Tool {
            name: "finance_receivables_update",
            title: "Update a receivable",
            description: "Changes the fields sent of a pending receivable; null clears a field. Never the status: use _settle, _cancel \
or _reopen.",
        },
        delete: Tool {
            name: "finance_receivables_delete",
            title: "Delete a receivable",
            description: "Deletes a pending or cancelled receivable (reopen a received one first). Asks the user to confirm.",
        },
        aggregates: Tool {
            name: "finance_receivables_aggregates",
            title: "Receivable totals",
            description: "Totals of receivables (count, total, pending, received, overdue_count) for a month, a due-date range or all \
time.",
        },
        settle: Tool {
            name: "finance_receivables_settle",
            title: "Receive a receivable",
            description: "Records a receipt: the credit in the ledger into financial_account_id (unless the receivable names one). \
Moves money: asks the user to confirm.",
        },
        cancel: Tool {
            name: "finance_receivables_cancel",
            title: "Cancel a receivable",
            description: "Cancels a pending receivable (finance_receivables_reopen undoes it). Asks the user to confirm.",
        },
        reopen: Tool {
            name: "finance_receivables_reopen",
            title: "Reopen a receivable",
            description: "Makes a received or cancelled receivable pending again; a receipt's ledger transaction is removed. Asks the \
user to confirm.",
        },
    };
}

/// What the action routes are: the real API moves a bill by `PATCH {status}`; the
/// routes stay as its aliases (and as the doors of the confirmed tools).
const ACTION_ROUTE: &str = "action route: the same move as PATCH with a status";

/// The operations both kinds have (`{collection}`: `payables` or `receivables`), in
/// catalogue order.
const fn bill_operations<B: Declared>() -> [Op; 10] {
    [
        Op::list::<Bills<B>>("List {collection}").with(B::TOOLS.list),
        Op::get::<Bills<B>>("Get one of the {collection}").with(B::TOOLS.get),
        Op::create::<Bills<B>>("Create {collection} (one, or a series of installments or recurrences)")
            .with(B::TOOLS.create),
        Op::update::<Bills<B>>("Update one of the {collection}; a status moves it (settle, cancel, reopen)")
            .patched::<Bills<B>, For<B, BillingPatch<B::Status>>>(run_patch::<B>)
            .with(B::TOOLS.update),
        Op::delete::<Bills<B>>("Delete one of the {collection}").with(B::TOOLS.delete),
        Op::read("/aggregates", "aggregates", "Totals of {collection}", run_aggregates::<B>)
            .queries(AggregatesQuery::schema)
            .answers(200, aggregates::<B>)
            .with(B::TOOLS.aggregates),
        Op::read("/ids", "ids", "Sweep the ids of {collection}", run_ids::<B>).answers(200, schema_of::<IdPage>),
        Op::write(
            "post",
            "/{id}/settle",
            "settle",
            "Settle one of the {collection} (creates its ledger transaction)",
            run_settle::<B>,
        )
        .takes::<SettleRequest>()
        .answers(200, schema_of::<Of<B, Billing>>)
        .extension(ACTION_ROUTE)
        .with(B::TOOLS.settle)
        .confirmed(confirm_settle::<B>),
        Op::write("post", "/{id}/cancel", "cancel", "Cancel a pending one of the {collection}", run_cancel::<B>)
            .answers(200, schema_of::<Of<B, Billing>>)
            .extension(ACTION_ROUTE)
            .with(B::TOOLS.cancel)
            .confirmed(confirm_cancel::<B>),
        Op::write(
            "post",
            "/{id}/reopen",
            "reopen",
            "Reopen one of the {collection} (removes its settlement transaction)",
            run_reopen::<B>,
        )
        .answers(200, schema_of::<Of<B, Billing>>)
        .extension(ACTION_ROUTE)
        .with(B::TOOLS.reopen)
        .confirmed(confirm_reopen::<B>),
    ]
}

/// A payable's orders to the bank: its dispatch and its cancellation.
const PAYABLE_BANK: [Op; 2] = [
    Op::write("post", "/{id}/send-to-bank", "send_to_bank", "Send a payable to the bank (pays it through the banking gateway)", run_send_to_bank)
        .bank()
        .answers(200, schema_of::<Of<Payable, Billing>>)
        .tool(
            "finance_payables_send_to_bank",
            "Pay a payable through the bank",
            "Pays a pending payable through the bank: its barcode, Pix code or key, bank account (TED) or tax_data, from its \
account connected to the bank. kobana_status: pending, scheduled, confirmed (then it is paid, with a receipt) or \
rejected. Moves money: asks the user to confirm.",
        )
        .confirmed(confirm_send_to_bank),
    Op::write("post", "/{id}/cancel-dispatch", "cancel_dispatch", "Cancel a payable's dispatch to the bank", run_cancel_dispatch)
        .bank()
        .answers(200, schema_of::<Of<Payable, Billing>>)
        .tool(
            "finance_payables_cancel_dispatch",
            "Stop a payment at the bank",
            "Stops a payment the bank has not made yet (kobana_status pending or scheduled); the payable stays pending. Asks \
the user to confirm.",
        )
        .confirmed(confirm_cancel_dispatch),
];

/// The `/v1/payables` operations.
pub static PAYABLES: Declaration =
    Declaration::of::<Payables>(const { &joined::<10, 2, 12>(bill_operations::<Payable>(), PAYABLE_BANK) });
/// A receivable's orders to the bank: its charge and the charge's cancellation.
const RECEIVABLE_BANK: [Op; 2] = [
    Op::write("post", "/{id}/charge", "charge", "Charge a receivable by Pix or boleto through the banking gateway", run_charge)
        .bank()
        .takes::<ChargeRequest>()
        .answers(200, schema_of::<Of<Receivable, Billing>>)
        .tool(
            "finance_receivables_charge",
            "Charge a customer by Pix or boleto",
            "Issues a Pix charge (kind pix) or a boleto (kind bank_billet) for a pending receivable, to its customer, \
received in its account. charge_state: registering, registered (then kobana_pix_qrcode or the boleto's line), \
paid (then it is received), canceled. Asks the user to confirm.",
        )
        .confirmed(confirm_charge),
    Op::write("post", "/{id}/charge/cancel", "cancel_charge", "Cancel a receivable's charge", run_cancel_charge)
        .bank()
        .answers(200, schema_of::<Of<Receivable, Billing>>)
        .tool(
            "finance_receivables_cancel_charge",
            "Cancel a charge",
            "Cancels a receivable's live charge: a boleto at once, a Pix once the bank confirms (charge_state canceled). \
The receivable stays pending. Asks the user to confirm.",
        )
        .confirmed(confirm_cancel_charge),
];

/// The `/v1/receivables` operations.
pub static RECEIVABLES: Declaration =
    Declaration::of::<Receivables>(const { &joined::<10, 2, 12>(bill_operations::<Receivable>(), RECEIVABLE_BANK) });

fn run_charge(c: Call<'_>) -> Running<'_> {
    Box::pin(async move {
        let request: ChargeRequest = parse(c.body)?;
        reply(Of::<Receivable, _>::new(super::charges::charge(c.ctx, c.conn, c.ws, c.id, request).await?))
    })
}

fn run_cancel_charge(c: Call<'_>) -> Running<'_> {
    Box::pin(
        async move { reply(Of::<Receivable, _>::new(super::charges::cancel_charge(c.ctx, c.conn, c.ws, c.id).await?)) },
    )
}

/// "Charge … by Pix?": the customer, the amount in R$, how, due when, into which account.
fn confirm_charge(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, id, body, .. } = c;
        let request: ChargeRequest = parse(body)?;
        let how = match request.kind {
            ChargeKind::Pix => "a Pix charge",
            ChargeKind::BankBillet => "a boleto",
        };
        let Some(bill) = peek::<Receivables>(ctx, conn, ws, id).await?.map(|of| of.0) else {
            return Ok(format!("Send the customer {how} for the receivable {id}?"));
        };
        let account = match bill.row.financial_account_id.as_ref().or(bill.row.expected_account_id.as_ref()) {
            Some(account) => {
                format!(", received in the account {}", label_of::<Accounts>(ctx, conn, ws, account).await?)
            }
            None => String::new(),
        };
        Ok(format!(
            "Send the customer {how} of {} for the receivable {}{account}?",
            bill.row.nominal_amount.brl(),
            label::<Receivable>(&bill)
        ))
    })
}

/// "Cancel the charge …?": the receivable and what the customer was billed.
fn confirm_cancel_charge(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, id, .. } = c;
        let Some(bill) = peek::<Receivables>(ctx, conn, ws, id).await?.map(|of| of.0) else {
            return Ok(format!("Cancel the charge of the receivable {id}? It stays pending."));
        };
        Ok(format!(
            "Cancel the charge of {} for the receivable {}? The customer can no longer pay it; the receivable stays pending.",
            bill.row.nominal_amount.brl(),
            label::<Receivable>(&bill)
        ))
    })
}

fn run_send_to_bank(c: Call<'_>) -> Running<'_> {
    Box::pin(
        async move { reply(Of::<Payable, _>::new(super::dispatch::send_to_bank(c.ctx, c.conn, c.ws, c.id).await?)) },
    )
}

fn run_cancel_dispatch(c: Call<'_>) -> Running<'_> {
    Box::pin(
        async move { reply(Of::<Payable, _>::new(super::dispatch::cancel_dispatch(c.ctx, c.conn, c.ws, c.id).await?)) },
    )
}

/// "Pay … through the bank?": the payee, the amount in R$, how and from which account.
fn confirm_send_to_bank(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, id, .. } = c;
        let Some(bill) = peek::<Payables>(ctx, conn, ws, id).await?.map(|of| of.0) else {
            return Ok(format!("Send the payable {id} to the bank? The bank pays it from its account."));
        };
        // How the bank will pay it, as the dispatch decides (what it lacks is refused
        // before the user is asked).
        let method = match super::dispatch::kind_of(&bill)? {
            PaymentKind::Pix => "by Pix (its copia-e-cola code)",
            PaymentKind::PixTransfer => "by Pix to its key",
            PaymentKind::Utility => "by its slip's barcode",
            PaymentKind::BankBillet => "by boleto",
            PaymentKind::Ted => "by TED to its bank account",
            PaymentKind::Tax => "by its tax guide's data",
        };
        let account = match bill.row.financial_account_id.as_ref().or(bill.row.expected_account_id.as_ref()) {
            Some(account) => format!(" from the account {}", label_of::<Accounts>(ctx, conn, ws, account).await?),
            None => String::new(),
        };
        Ok(format!(
            "Pay the payable {} through the bank? The bank pays {} {method}{account}.",
            label::<Payable>(&bill),
            bill.row.nominal_amount.brl()
        ))
    })
}

/// "Stop the payment …?": the payable and what the bank was to pay.
fn confirm_cancel_dispatch(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, id, .. } = c;
        let Some(bill) = peek::<Payables>(ctx, conn, ws, id).await?.map(|of| of.0) else {
            return Ok(format!("Stop the bank's payment of the payable {id}? It stays pending."));
        };
        Ok(format!(
            "Stop the bank's payment of {} for the payable {}? The payable stays pending.",
            bill.row.nominal_amount.brl(),
            label::<Payable>(&bill)
        ))
    })
}
