//! The payables and receivables as declared resources: [`Bills`] names their
//! operations in `ops::bills` (one implementation for both kinds, the [`BillKind`]
//! parameter says which; their create and update, `Writable`, are written there with
//! the rules), and [`PAYABLES`] / [`RECEIVABLES`] are their `/v1` tables.
//! Kept apart from the billing rules themselves so each file changes for one reason.

use crate::storage::Conn;

use super::charges::{ChargeRequest, Issue};
use super::duplicates::{Duplicates, DuplicatesQuery};
use super::{BillKind, Billing, BillingPatch, BillingRow, For, Of, Payable, Receivable, SettleRequest, Transition};
use crate::domain::roles::Resource;
use crate::domain::shown;
use crate::domain::text::quoted;
use crate::error::ApiError;
use crate::ops::attachments::with_files;
use crate::ops::machinery::common::bill_label;
use crate::ops::machinery::list::{ListRequest, ListSpec};
use crate::ops::machinery::period::AggregatesParams;
use crate::ops::machinery::resource::{
    joined, parse, peek, reply, Asking, Call, Declaration, Deletable, Op, Question, Records, Running, Tool,
};
use crate::ops::machinery::validate::schema_of;
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
    fn read_schema() -> serde_json::Value {
        with_files::<Of<B, Billing>>()
    }
}

impl<B: BillKind> Deletable for Bills<B> {
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        super::delete::<B>(ctx, conn, ws, id).await
    }
    async fn refused(conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        let bill = super::rows::find::<B>(conn, ws, id).await?;
        super::check_delete::<B>(conn, ws, &bill).await
    }
}

/// A bill's label ([`bill_label`]), for a confirmation.
fn label<B: BillKind>(bill: &Billing) -> String {
    let row = &bill.row;
    bill_label(B::POLARITY, &row.description, row.person_name.as_deref(), row.amount, row.due_date)
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

/// The bill `id` a confirmation names, bound to its question; `None` when the caller may
/// change it but not read it.
async fn shown<B: BillKind>(c: &mut Call<'_>, question: &mut Question) -> Result<Option<Billing>, ApiError> {
    let bill = peek::<Bills<B>>(c.ctx, c.conn, c.ws, c.id).await?.map(|of| of.0);
    question.bind(&bill);
    Ok(bill)
}

/// "Record the payment of … made outside Kobana?": the bill, what moved, when and in which
/// account; it moves no money.
fn confirm_settle<B: BillKind>(mut c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let input: SettleRequest = parse(c.body.clone())?;
        let mut question = Question::binding();
        let Some(bill) = shown::<B>(&mut c, &mut question).await? else {
            // Named by what the request says: the caller may not read the bill.
            let amount = input.amounts.ticket_amount.map(|a| format!(" of {}", a.cents().brl())).unwrap_or_default();
            let account = match &input.financial_account_id {
                Some(id) => format!(
                    " {} the account {}",
                    B::ACCOUNT,
                    crate::ops::accounts::named(c.ctx, c.conn, c.ws, id, &mut question).await?
                ),
                None => String::new(),
            };
            return Ok(question.asks(format!(
                "Record a {}{amount} for the {} {}, made on {}{account}? No money moves: this records in the books a {} made \
                 outside Kobana.",
                B::SETTLEMENT,
                B::KIND,
                c.id,
                input.payment_date,
                B::SETTLEMENT,
            )));
        };
        let Call { ctx, conn, ws, .. } = c;
        let settlement = super::status::settlement::<B>(conn, ws, &bill, &input).await?;
        question.bind(&settlement);
        let account = crate::ops::accounts::named(ctx, conn, ws, &settlement.account_id, &mut question).await?;
        Ok(question.asks(format!(
            "Record a {} of {} for the {} {}, made on {} {} the account {account}? No money moves: this records in the \
             books a {} made outside Kobana.",
            B::SETTLEMENT,
            settlement.ticket.brl(),
            B::KIND,
            label::<B>(&bill),
            settlement.payment_date,
            B::ACCOUNT,
            B::SETTLEMENT,
        )))
    })
}

fn confirm_cancel<B: BillKind>(mut c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let mut question = Question::binding();
        let label = match shown::<B>(&mut c, &mut question).await? {
            Some(bill) => {
                super::status::check_move::<B>(c.conn, c.ws, &bill, Transition::Cancel).await?;
                label::<B>(&bill)
            }
            None => c.id.to_string(),
        };
        Ok(question.asks(format!(
            "Cancel the {} {label}? It will no longer be expected to be {}.",
            B::KIND,
            B::SETTLED.as_str()
        )))
    })
}

fn confirm_reopen<B: BillKind>(mut c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let mut question = Question::binding();
        let Some(bill) = shown::<B>(&mut c, &mut question).await? else {
            return Ok(question.asks(format!("Reopen the {} {}? It becomes pending again.", B::KIND, c.id)));
        };
        let Call { ctx, conn, ws, .. } = c;
        super::status::check_move::<B>(conn, ws, &bill, Transition::Reopen).await?;
        let label = label::<B>(&bill);
        let settlement = match (&bill.row.payment_date, &bill.row.financial_account_id) {
            (Some(date), Some(account)) if bill.row.status == B::SETTLED => {
                let moved = bill.row.ticket_amount.unwrap_or(bill.row.nominal_amount);
                format!(
                    " Its {} of {} on {date} is removed from the account {}.",
                    B::SETTLEMENT,
                    moved.brl(),
                    crate::ops::accounts::named(ctx, conn, ws, account, &mut question).await?
                )
            }
            _ => String::new(),
        };
        Ok(question.asks(format!(
            "Reopen the {} {} {label}? It becomes pending again.{settlement}",
            bill.row.status.as_str(),
            B::KIND
        )))
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
    /// What the OpenAPI document says of a create beyond its summary.
    const CREATED: Option<&'static str>;
}

impl Declared for Payable {
    const CREATED: Option<&'static str> = Some(
        "Where the workspace's approval gate is on (it is by default), a payable created through /v1 or a tool \
waits for a person's approval: it is answered with payment_approval pending_approval; the totals, the aging, the \
cash flow and the income statement count it, and the default list leaves it out until approved in the dashboard. \
List the waiting ones with GET /v1/payables?payment_approval=pending_approval (or one by ?id=).",
    );
    const TOOLS: BillTools = BillTools {
        list: Tool {
            name: "finance_payables_list",
            title: "List payables",
            description: "Lists bills to pay; one waiting for approval only when filtered by id or payment_approval (totals \
and reports count it). Filters: a value or operators, e.g. overdue: \
{\"status\":\"pending\",\"due_date\":{\"lt\":\"2026-11-30\"}}; person_id is the vendor, group_id a series. \
For totals use finance_payables_aggregates.",
        },
        get: Tool {
            name: "finance_payables_get",
            title: "Get a payable",
            description: "One payable: vendor, amounts, dates, status, category, apportionment, taxes, files (attachments) and its \
settlement transaction.",
        },
        create: Tool {
            name: "finance_payables_create",
            title: "Create a payable",
            description: "Records a bill to pay, pending; where the approval gate is on it waits for a person's approval \
(payment_approval pending_approval): totals and reports count it, lists show it only with filters {\"id\":…} or \
{\"payment_approval\":\"pending_approval\"}. person_name/category_name find or create; type installment \
splits it into monthly parcels, recurring repeats it. To pay it through the bank: finance_payables_send_to_bank; to record a \
payment made elsewhere: finance_payables_settle.",
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
            title: "Record a payment made elsewhere",
            description: "Records that a pending payable was paid outside Kobana (cash, another bank's app): marks it paid and adds the \
debit to the ledger of financial_account_id (unless the payable names one). It moves no money: to pay through the bank use \
finance_payables_send_to_bank. Asks the user to confirm.",
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
    const CREATED: Option<&'static str> = None;
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
            description: "One receivable: customer, amounts, dates, status, category, apportionment, taxes, files (attachments) and \
its settlement transaction.",
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
            title: "Record a receipt",
            description: "Records that a customer paid a pending receivable: marks it received and adds the credit to the ledger of \
financial_account_id (unless the receivable names one). It moves no money: to bill the customer use \
finance_receivables_charge. Asks the user to confirm.",
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
            .described(B::CREATED)
            .with(B::TOOLS.create),
        Op::update::<Bills<B>>("Update one of the {collection}; a status moves it (settle, cancel, reopen)")
            .patched::<Bills<B>, For<B, BillingPatch<B::Status>>>(run_patch::<B>)
            .with(B::TOOLS.update),
        Op::delete::<Bills<B>>("Delete one of the {collection}").with(B::TOOLS.delete),
        Op::read("/aggregates", "aggregates", "Totals of {collection}", run_aggregates::<B>)
            .queries(schema_of::<AggregatesParams>)
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

/// A payable's own operations: the likely duplicates, and its orders to the bank (its
/// dispatch and its cancellation).
const PAYABLE_OWN: [Op; 3] = [
    Op::read("/duplicates", "duplicates", "Likely duplicate payables, in groups, each with why it matched", run_duplicates)
        .queries(schema_of::<DuplicatesQuery>)
        .answers(200, schema_of::<Duplicates>)
        .extension("duplicate bills: what could be paid twice")
        .tool(
            "finance_payables_duplicates",
            "Find duplicate payables",
            "Groups of open payables (waiting for approval included) that look like one bill recorded twice: same boleto, \
same Pix copia-e-cola, same vendor and document number, or same vendor and amount due at most within_days apart \
(default 7); each says why. Ask the user which to keep before cancelling one (finance_payables_cancel).",
        ),
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
    Declaration::of::<Payables>(const { &joined::<10, 3, 13>(bill_operations::<Payable>(), PAYABLE_OWN) });
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

/// A receivable the bank acts on, bound to its question: read with the operation's own
/// permission (a bank order's question shows what the bank will do, whatever the caller
/// may read).
async fn ordered<B: BillKind>(c: &mut Call<'_>, question: &mut Question) -> Result<Billing, ApiError> {
    c.ctx.authorize(c.ws, B::RESOURCE, crate::domain::roles::Access::Bank)?;
    let bill = super::rows::find::<B>(c.conn, c.ws, c.id).await?;
    question.bind(&bill);
    Ok(bill)
}

/// "Send “Maria” (CPF ***.456.789-**) a Pix charge of R$ … for the receivable …, received
/// in the account …?": the payer, the amount in R$, how, due when, into which account.
fn confirm_charge(mut c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let request: ChargeRequest = parse(c.body.clone())?;
        let mut question = Question::binding();
        let bill = ordered::<Receivable>(&mut c, &mut question).await?;
        let Call { ctx, conn, ws, .. } = c;
        let invoice = super::charges::invoice(conn, ws, &bill, request.kind).await?;
        question.bind(&invoice);
        let account = crate::ops::accounts::named(ctx, conn, ws, &invoice.account_id, &mut question).await?;
        let (how, payer, document, due) = match &invoice.issue {
            Issue::Pix(pix) => ("a Pix charge", &pix.payer.name, &pix.payer.document_number, &pix.expire_at[..10]),
            Issue::BankBillet(billet) => {
                ("a boleto", &billet.customer_person_name, &billet.customer_cnpj_cpf, billet.expire_at.as_str())
            }
        };
        Ok(question.asks(format!(
            "Send {} ({}) {how} of {} due {due} for the receivable {}, received in the account {account}?",
            quoted(payer),
            shown::document(document),
            bill.row.nominal_amount.brl(),
            label::<Receivable>(&bill),
        )))
    })
}

/// "Cancel the charge …?": the receivable and what the customer was billed.
fn confirm_cancel_charge(mut c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let mut question = Question::binding();
        let bill = ordered::<Receivable>(&mut c, &mut question).await?;
        let charge = super::charges::live(c.conn, c.ws, &bill.row.id).await?;
        question.bind(&charge.uid);
        Ok(question.asks(format!(
            "Cancel the {} of {} for the receivable {}? The customer can no longer pay it; the receivable stays pending.",
            match charge.kind.as_str() {
                "bank_billet" => "boleto",
                _ => "Pix charge",
            },
            bill.row.nominal_amount.brl(),
            label::<Receivable>(&bill)
        )))
    })
}

fn run_duplicates(c: Call<'_>) -> Running<'_> {
    Box::pin(async move {
        let query: DuplicatesQuery = crate::ops::machinery::validate::parse_query(c.query)?;
        reply(super::duplicates::duplicates(c.ctx, c.conn, c.ws, &query).await?)
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

/// "Pay … through the bank? The bank pays R$ … by TED to “…” (CNPJ …), bank 341, branch
/// 0912, account ***871-3, from the account …": the payable, the exact destination the
/// bank is sent, the amount and the source account.
fn confirm_send_to_bank(mut c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let mut question = Question::binding();
        let bill = ordered::<Payable>(&mut c, &mut question).await?;
        let Call { ctx, conn, ws, .. } = c;
        let order = super::dispatch::order(conn, ws, &bill).await?;
        question.bind(&order);
        let account = crate::ops::accounts::named(ctx, conn, ws, &order.account_id, &mut question).await?;
        let when = match &order.payment.scheduled_to {
            Some(day) => format!(" on {day}"),
            None => String::new(),
        };
        Ok(question.asks(format!(
            "Pay the payable {} through the bank? The bank pays {} {} from the account {account}{when}.",
            label::<Payable>(&bill),
            bill.row.nominal_amount.brl(),
            super::dispatch::destination(&order),
        )))
    })
}

/// "Stop the payment …?": the payable and what the bank was to pay.
fn confirm_cancel_dispatch(mut c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let mut question = Question::binding();
        let bill = ordered::<Payable>(&mut c, &mut question).await?;
        let dispatch = super::dispatch::live(c.conn, c.ws, &bill.row.id).await?;
        question.bind(&dispatch.payment_uid);
        Ok(question.asks(format!(
            "Stop the bank's payment of {} for the payable {}? The payable stays pending.",
            bill.row.nominal_amount.brl(),
            label::<Payable>(&bill)
        )))
    })
}
