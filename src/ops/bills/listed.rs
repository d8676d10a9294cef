//! The bills' lists: their filters, sorts and scope, one spec per kind.

use super::kind::BillKind;
use crate::domain::bills::{Payable, Receivable};
use crate::ops::machinery::list::{list_spec, Field, Kind, ListSpec, Shown};

/// What tells the two kinds' lists apart: which rows are theirs, and their statuses.
trait Listed: BillKind {
    const SCOPE: &'static str;
    /// The filters of the kind's own fields.
    const OWN: &'static [Field];
    /// The rows a list shows unless it asks for others ([`ListSpec::unless_filtered`]).
    const SHOWN: Option<Shown>;
}

impl Listed for Payable {
    const SCOPE: &'static str = "billings.kind = 'payable'";
    const OWN: &'static [Field] = &[Field {
        name: "payment_approval",
        column: "billings.payment_approval",
        kind: Kind::Enum(&["pending_approval", "approving", "creation_approved", "creation_rejected"]),
        extension: None,
    }];
    const SHOWN: Option<Shown> = Some(Shown {
        asked_by: &["payment_approval", "id"],
        shown: super::approval::OFFICIAL,
        swept: super::approval::OWED,
    });
}

/// A receivable's current charge's kind, status and registration, for a filter.
const CHARGE_KIND: &str = "(SELECT c.kind FROM receivable_charges c WHERE c.workspace_id = billings.workspace_id \
                           AND c.billing_id = billings.id AND c.current = 1)";
const CHARGE_STATUS: &str = "(SELECT c.status FROM receivable_charges c WHERE c.workspace_id = billings.workspace_id \
                             AND c.billing_id = billings.id AND c.current = 1)";
const CHARGE_REGISTRATION: &str = "(SELECT c.registration_status FROM receivable_charges c \
                                   WHERE c.workspace_id = billings.workspace_id AND c.billing_id = billings.id \
                                   AND c.current = 1)";

impl Listed for Receivable {
    const SCOPE: &'static str = "billings.kind = 'receivable'";
    const OWN: &'static [Field] = &[
        Field {
            name: "kobana_charge_kind",
            column: CHARGE_KIND,
            kind: Kind::Enum(&["bank_billet", "pix"]),
            extension: None,
        },
        Field { name: "kobana_status", column: CHARGE_STATUS, kind: Kind::Text, extension: None },
        Field { name: "kobana_registration_status", column: CHARGE_REGISTRATION, kind: Kind::Text, extension: None },
    ];
    const SHOWN: Option<Shown> = None;
}

/// A kind's list: the filters and sorts both kinds share, on the kind's own rows.
const fn billing_list<B: Listed>() -> ListSpec {
    let spec = list_spec!(billings where B::SCOPE;
        filters: id: Uuid @ "by id", company_id: Uuid, status: Enum(B::STATUSES), type = billing_type: Enum(&["normal", "recurring", "installment"]),
            person_id: Uuid, category_id: Uuid,
            classification_center_id = "(SELECT a.classification_center_id FROM allocations a WHERE a.owner_type = 'billing' \
                AND a.workspace_id = billings.workspace_id AND a.owner_id = billings.id AND a.position = 0)": Uuid,
            financial_account_id: Uuid, expected_account_id: Uuid @ "forecast account", payment_method_kind: Enum(B::METHODS), document_number: Text, group_id: Uuid,
            ir_relevant: Bool,
            due_date: Date, payment_date: Date, competence_date: Date, updated_at: Timestamp, amount = amount_cents: Money;
        sorts: due_date, competence_date, created_at, updated_at, amount = amount_cents,
            payment_date = "COALESCE(billings.payment_date, '')";
        default: due_date);
    ListSpec { own: B::OWN, unless_filtered: B::SHOWN, ..spec }
}

pub static PAYABLES_LIST: ListSpec = billing_list::<Payable>();
pub static RECEIVABLES_LIST: ListSpec = billing_list::<Receivable>();
