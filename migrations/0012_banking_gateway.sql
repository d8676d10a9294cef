-- The banking gateway (Kobana's banking API): the source account a payment leaves from
-- as the gateway knows it, each payable's dispatch, the receipts of what the bank
-- paid, and the gateway's events already applied.
ALTER TABLE financial_accounts ADD COLUMN kobana_account_uid TEXT;
-- The account's boleto agreement at the gateway (`bank_billet_account_id`): boletos
-- charged into it are issued under it.
ALTER TABLE financial_accounts ADD COLUMN kobana_billet_account_id BIGINT;
-- A person's billing address, which a boleto needs (JSON: street, number, neighborhood,
-- city, state, zip_code). Kept for the charges, never answered (as the real API keeps
-- people's addresses).
ALTER TABLE people ADD COLUMN billing_address TEXT;

-- The approval gate: a workspace setting, on by default. A payable created through the
-- API or a tool there waits at the gate (`pending_approval`) until a person approves it
-- (`creation_approved`) or rejects it (`creation_rejected`, for good); null is an
-- official bill (seeded, imported, or created where the gate is off). Only an official
-- or approved payable is listed by default and goes to the bank.
ALTER TABLE workspaces ADD COLUMN payment_approval_gate INTEGER NOT NULL DEFAULT 1
    CHECK (payment_approval_gate IN (0, 1));
ALTER TABLE billings ADD COLUMN payment_approval TEXT
    CHECK (payment_approval IN ('pending_approval', 'approving', 'creation_approved', 'creation_rejected'));
ALTER TABLE billings ADD COLUMN approved_at TEXT;
ALTER TABLE billings ADD COLUMN rejected_at TEXT;
ALTER TABLE billings ADD COLUMN rejection_reason TEXT;

-- A payable's dispatches to the bank: each a payment at the gateway and the status the
-- gateway last gave it (`status_updated_at`: the gateway's time of that status, so an
-- older event never undoes a newer one). `attempt` counts the dispatches before it (the
-- payable's current one is its last): a retried dispatch sends the same idempotency
-- key, a new dispatch after a cancellation or a rejection another.
CREATE TABLE payment_dispatches (
    payment_uid         TEXT PRIMARY KEY,
    billing_id          TEXT NOT NULL REFERENCES billings (id),
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id),
    attempt             INTEGER NOT NULL,
    payment_kind        TEXT NOT NULL CHECK (payment_kind IN ('bank_billet', 'utility', 'pix', 'pix_transfer')),
    source_account_id   TEXT NOT NULL REFERENCES financial_accounts (id),
    status              TEXT NOT NULL,
    status_updated_at   TEXT NOT NULL,
    dispatched_by       TEXT,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);
CREATE UNIQUE INDEX payment_dispatches_by_billing ON payment_dispatches (workspace_id, billing_id, attempt);

-- A receivable's charges through the gateway: each a Pix charge (its uid) or a boleto
-- (its id, as text, and `charge_id`), with the gateway's commercial status, its
-- registration status and the time of the last change kept (an older event never undoes
-- a newer one). `current` marks the receivable's last charge: a new charge after a
-- cancelled or failed one is another row.
CREATE TABLE receivable_charges (
    charge_uid          TEXT PRIMARY KEY,
    billing_id          TEXT NOT NULL REFERENCES billings (id),
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id),
    attempt             INTEGER NOT NULL,
    current             INTEGER NOT NULL CHECK (current IN (0, 1)),
    kind                TEXT NOT NULL CHECK (kind IN ('bank_billet', 'pix')),
    charge_id           BIGINT,
    account_id          TEXT NOT NULL REFERENCES financial_accounts (id),
    status              TEXT NOT NULL,
    registration_status TEXT,
    status_updated_at   TEXT NOT NULL,
    url                 TEXT,
    barcode             TEXT,
    digitable_line      TEXT,
    pix_qrcode          TEXT,
    charged_by          TEXT,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);
CREATE UNIQUE INDEX receivable_charges_current ON receivable_charges (workspace_id, billing_id) WHERE current = 1;
CREATE INDEX receivable_charges_by_billing ON receivable_charges (workspace_id, billing_id, attempt);

-- Proofs of payment (comprovantes): from the gateway when it pays a payable, or
-- uploaded. A receipt never settles a bill.
CREATE TABLE receipts (
    id                   TEXT PRIMARY KEY,
    workspace_id         TEXT NOT NULL REFERENCES workspaces (id),
    company_id           TEXT REFERENCES companies (id),
    payable_id           TEXT REFERENCES billings (id),
    financial_account_id TEXT REFERENCES financial_accounts (id),
    source               TEXT NOT NULL CHECK (source IN ('kobana', 'upload')),
    status               TEXT NOT NULL CHECK (status IN ('pending', 'available', 'failed')),
    paid_at              TEXT NOT NULL,
    amount_cents         BIGINT NOT NULL,
    payee_name           TEXT,
    payee_document       TEXT,
    payment_method_kind  TEXT,
    external_uid         TEXT,
    attachment_id        TEXT REFERENCES attachments (id),
    document_url         TEXT,
    error_message        TEXT,
    received_at          TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);
CREATE UNIQUE INDEX receipts_by_external_uid ON receipts (workspace_id, external_uid);
CREATE INDEX receipts_by_paid_at ON receipts (workspace_id, paid_at, id);

-- The gateway's events already applied: a delivery repeated is applied once.
CREATE TABLE gateway_events (
    event_id    TEXT PRIMARY KEY,
    received_at TEXT NOT NULL
);

-- The cash flow's covering index reads the approval gate too: the bills the gate holds
-- back are not counted, and the statement still reads the index alone.
DROP INDEX billings_flow;
CREATE INDEX billings_flow ON billings (workspace_id, status, due_date, kind, amount_cents, company_id, payment_approval);
