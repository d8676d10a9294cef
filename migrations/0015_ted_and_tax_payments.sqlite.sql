-- A payable's dispatch may also be a TED to a bank account (`ted`, `POST
-- /v2/transfer/ted`) or a tax guide paid by its data (`tax`, `POST /v2/payment/taxes`):
-- the kinds a dispatch is kept with are widened to them. SQLite changes a CHECK only by
-- building the table again (no table refers to this one), its rows and index with it.
CREATE TABLE payment_dispatches_widened (
    payment_uid         TEXT PRIMARY KEY,
    billing_id          TEXT NOT NULL REFERENCES billings (id),
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id),
    attempt             INTEGER NOT NULL,
    payment_kind        TEXT NOT NULL
        CHECK (payment_kind IN ('bank_billet', 'utility', 'pix', 'pix_transfer', 'ted', 'tax')),
    source_account_id   TEXT NOT NULL REFERENCES financial_accounts (id),
    status              TEXT NOT NULL,
    status_updated_at   TEXT NOT NULL,
    dispatched_by       TEXT,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);
INSERT INTO payment_dispatches_widened (payment_uid, billing_id, workspace_id, attempt, payment_kind,
        source_account_id, status, status_updated_at, dispatched_by, created_at, updated_at)
    SELECT payment_uid, billing_id, workspace_id, attempt, payment_kind, source_account_id, status,
           status_updated_at, dispatched_by, created_at, updated_at
      FROM payment_dispatches;
DROP TABLE payment_dispatches;
ALTER TABLE payment_dispatches_widened RENAME TO payment_dispatches;
CREATE UNIQUE INDEX payment_dispatches_by_billing ON payment_dispatches (workspace_id, billing_id, attempt);
