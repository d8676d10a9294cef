-- Running totals for the reports, kept by the database itself: a trigger on each table
-- a report reads adds a row's part when it is written and takes it back when it changes
-- or goes, in the same transaction. A report then sums a few rows per day instead of
-- every bill and movement (SQL aggregates still: the totals are sums, summed again).
--
-- * report_open_bills: the pending bills the approval gate lets through, by kind, day
--   due, company and person ('' for none): the aging.
-- * report_bill_competence: the bills not cancelled the gate lets through, by kind,
--   competence day, company and category ('' for none): the income statement on the
--   competence basis.
-- * report_ledger_cash: the posted movements by day, company, side (revenue, expense,
--   transfer_in, transfer_out) and category: the statement on the cash basis.
-- * report_ledger_competence: the posted movements no bill stands for (none linked, none
--   reconciled with bills), by competence day (or their day): the competence basis.
-- A total that drops to zero keeps its row (a key seen once); the reports skip them.

CREATE TABLE report_open_bills (
    workspace_id TEXT NOT NULL,
    kind         TEXT NOT NULL,
    due_date     TEXT NOT NULL,
    company_id   TEXT NOT NULL,
    person_key   TEXT NOT NULL,
    bills        BIGINT NOT NULL,
    amount_cents BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, kind, due_date, company_id, person_key)
);
CREATE TABLE report_bill_competence (
    workspace_id TEXT NOT NULL,
    day          TEXT NOT NULL,
    kind         TEXT NOT NULL,
    company_id   TEXT NOT NULL,
    category_key TEXT NOT NULL,
    amount_cents BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, day, kind, company_id, category_key)
);
CREATE TABLE report_ledger_cash (
    workspace_id TEXT NOT NULL,
    day          TEXT NOT NULL,
    side         TEXT NOT NULL,
    company_id   TEXT NOT NULL,
    category_key TEXT NOT NULL,
    amount_cents BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, day, side, company_id, category_key)
);
CREATE TABLE report_ledger_competence (
    workspace_id TEXT NOT NULL,
    day          TEXT NOT NULL,
    side         TEXT NOT NULL,
    company_id   TEXT NOT NULL,
    category_key TEXT NOT NULL,
    amount_cents BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, day, side, company_id, category_key)
);

CREATE FUNCTION report_billings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO report_open_bills (workspace_id, kind, due_date, company_id, person_key, bills, amount_cents)
                SELECT OLD.workspace_id, OLD.kind, OLD.due_date, OLD.company_id, COALESCE(OLD.person_id, ''), -1, -OLD.amount_cents
                 WHERE OLD.status = 'pending' AND (OLD.payment_approval IS NULL OR OLD.payment_approval = 'creation_approved')
                ON CONFLICT (workspace_id, kind, due_date, company_id, person_key) DO UPDATE
                SET bills = report_open_bills.bills + excluded.bills,
                    amount_cents = report_open_bills.amount_cents + excluded.amount_cents;
        INSERT INTO report_bill_competence (workspace_id, day, kind, company_id, category_key, amount_cents)
                SELECT OLD.workspace_id, OLD.competence_date, OLD.kind, OLD.company_id, COALESCE(OLD.category_id, ''), -OLD.amount_cents
                 WHERE OLD.status <> 'cancelled' AND (OLD.payment_approval IS NULL OR OLD.payment_approval = 'creation_approved')
                ON CONFLICT (workspace_id, day, kind, company_id, category_key) DO UPDATE
                SET amount_cents = report_bill_competence.amount_cents + excluded.amount_cents;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO report_open_bills (workspace_id, kind, due_date, company_id, person_key, bills, amount_cents)
                SELECT NEW.workspace_id, NEW.kind, NEW.due_date, NEW.company_id, COALESCE(NEW.person_id, ''), 1, NEW.amount_cents
                 WHERE NEW.status = 'pending' AND (NEW.payment_approval IS NULL OR NEW.payment_approval = 'creation_approved')
                ON CONFLICT (workspace_id, kind, due_date, company_id, person_key) DO UPDATE
                SET bills = report_open_bills.bills + excluded.bills,
                    amount_cents = report_open_bills.amount_cents + excluded.amount_cents;
        INSERT INTO report_bill_competence (workspace_id, day, kind, company_id, category_key, amount_cents)
                SELECT NEW.workspace_id, NEW.competence_date, NEW.kind, NEW.company_id, COALESCE(NEW.category_id, ''), NEW.amount_cents
                 WHERE NEW.status <> 'cancelled' AND (NEW.payment_approval IS NULL OR NEW.payment_approval = 'creation_approved')
                ON CONFLICT (workspace_id, day, kind, company_id, category_key) DO UPDATE
                SET amount_cents = report_bill_competence.amount_cents + excluded.amount_cents;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER report_billings_write AFTER INSERT OR DELETE ON billings FOR EACH ROW EXECUTE FUNCTION report_billings();
CREATE TRIGGER report_billings_update AFTER UPDATE OF status, payment_approval, amount_cents, due_date, competence_date, person_id, category_id, company_id, kind, workspace_id ON billings FOR EACH ROW EXECUTE FUNCTION report_billings();

CREATE FUNCTION report_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO report_ledger_cash (workspace_id, day, side, company_id, category_key, amount_cents)
                SELECT OLD.workspace_id, OLD.occurred_at, CASE WHEN OLD.transfer_id IS NOT NULL THEN CASE WHEN OLD.transaction_type = 'credit' THEN 'transfer_in' ELSE 'transfer_out' END WHEN OLD.transaction_type = 'credit' THEN 'revenue' ELSE 'expense' END,
                       OLD.company_id, COALESCE(OLD.category_id, ''), -OLD.amount_cents
                 WHERE OLD.is_pending = 0
                ON CONFLICT (workspace_id, day, side, company_id, category_key) DO UPDATE
                SET amount_cents = report_ledger_cash.amount_cents + excluded.amount_cents;
        INSERT INTO report_ledger_competence (workspace_id, day, side, company_id, category_key, amount_cents)
                SELECT OLD.workspace_id, COALESCE(OLD.competence_date, OLD.occurred_at), CASE WHEN OLD.transfer_id IS NOT NULL THEN CASE WHEN OLD.transaction_type = 'credit' THEN 'transfer_in' ELSE 'transfer_out' END WHEN OLD.transaction_type = 'credit' THEN 'revenue' ELSE 'expense' END,
                       OLD.company_id, COALESCE(OLD.category_id, ''), -OLD.amount_cents
                 WHERE OLD.is_pending = 0 AND OLD.billing_id IS NULL AND NOT EXISTS (SELECT 1 FROM reconciliation_members m WHERE m.member_type = 'transaction' AND m.member_id = OLD.id)
                ON CONFLICT (workspace_id, day, side, company_id, category_key) DO UPDATE
                SET amount_cents = report_ledger_competence.amount_cents + excluded.amount_cents;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO report_ledger_cash (workspace_id, day, side, company_id, category_key, amount_cents)
                SELECT NEW.workspace_id, NEW.occurred_at, CASE WHEN NEW.transfer_id IS NOT NULL THEN CASE WHEN NEW.transaction_type = 'credit' THEN 'transfer_in' ELSE 'transfer_out' END WHEN NEW.transaction_type = 'credit' THEN 'revenue' ELSE 'expense' END,
                       NEW.company_id, COALESCE(NEW.category_id, ''), NEW.amount_cents
                 WHERE NEW.is_pending = 0
                ON CONFLICT (workspace_id, day, side, company_id, category_key) DO UPDATE
                SET amount_cents = report_ledger_cash.amount_cents + excluded.amount_cents;
        INSERT INTO report_ledger_competence (workspace_id, day, side, company_id, category_key, amount_cents)
                SELECT NEW.workspace_id, COALESCE(NEW.competence_date, NEW.occurred_at), CASE WHEN NEW.transfer_id IS NOT NULL THEN CASE WHEN NEW.transaction_type = 'credit' THEN 'transfer_in' ELSE 'transfer_out' END WHEN NEW.transaction_type = 'credit' THEN 'revenue' ELSE 'expense' END,
                       NEW.company_id, COALESCE(NEW.category_id, ''), NEW.amount_cents
                 WHERE NEW.is_pending = 0 AND NEW.billing_id IS NULL AND NOT EXISTS (SELECT 1 FROM reconciliation_members m WHERE m.member_type = 'transaction' AND m.member_id = NEW.id)
                ON CONFLICT (workspace_id, day, side, company_id, category_key) DO UPDATE
                SET amount_cents = report_ledger_competence.amount_cents + excluded.amount_cents;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER report_transactions_write AFTER INSERT OR DELETE ON financial_transactions FOR EACH ROW EXECUTE FUNCTION report_transactions();
CREATE TRIGGER report_transactions_update AFTER UPDATE OF is_pending, billing_id, amount_cents, occurred_at, competence_date, transfer_id, transaction_type, category_id, company_id, workspace_id ON financial_transactions FOR EACH ROW EXECUTE FUNCTION report_transactions();

CREATE FUNCTION report_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO report_ledger_competence (workspace_id, day, side, company_id, category_key, amount_cents)
                SELECT t.workspace_id, COALESCE(t.competence_date, t.occurred_at), CASE WHEN t.transfer_id IS NOT NULL THEN CASE WHEN t.transaction_type = 'credit' THEN 'transfer_in' ELSE 'transfer_out' END WHEN t.transaction_type = 'credit' THEN 'revenue' ELSE 'expense' END,
                       t.company_id, COALESCE(t.category_id, ''), t.amount_cents
                  FROM financial_transactions t
                 WHERE OLD.member_type = 'transaction' AND t.id = OLD.member_id AND t.is_pending = 0 AND t.billing_id IS NULL
                ON CONFLICT (workspace_id, day, side, company_id, category_key) DO UPDATE
                SET amount_cents = report_ledger_competence.amount_cents + excluded.amount_cents;
    ELSE
        INSERT INTO report_ledger_competence (workspace_id, day, side, company_id, category_key, amount_cents)
                SELECT t.workspace_id, COALESCE(t.competence_date, t.occurred_at), CASE WHEN t.transfer_id IS NOT NULL THEN CASE WHEN t.transaction_type = 'credit' THEN 'transfer_in' ELSE 'transfer_out' END WHEN t.transaction_type = 'credit' THEN 'revenue' ELSE 'expense' END,
                       t.company_id, COALESCE(t.category_id, ''), -t.amount_cents
                  FROM financial_transactions t
                 WHERE NEW.member_type = 'transaction' AND t.id = NEW.member_id AND t.is_pending = 0 AND t.billing_id IS NULL
                ON CONFLICT (workspace_id, day, side, company_id, category_key) DO UPDATE
                SET amount_cents = report_ledger_competence.amount_cents + excluded.amount_cents;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER report_members_write AFTER INSERT OR DELETE ON reconciliation_members FOR EACH ROW EXECUTE FUNCTION report_members();

-- What is there already.
INSERT INTO report_open_bills (workspace_id, kind, due_date, company_id, person_key, bills, amount_cents)
SELECT b.workspace_id, b.kind, b.due_date, b.company_id, COALESCE(b.person_id, ''), COUNT(*), SUM(b.amount_cents)
  FROM billings b
 WHERE b.status = 'pending' AND (b.payment_approval IS NULL OR b.payment_approval = 'creation_approved')
 GROUP BY b.workspace_id, b.kind, b.due_date, b.company_id, COALESCE(b.person_id, '');
INSERT INTO report_bill_competence (workspace_id, day, kind, company_id, category_key, amount_cents)
SELECT b.workspace_id, b.competence_date, b.kind, b.company_id, COALESCE(b.category_id, ''), SUM(b.amount_cents)
  FROM billings b
 WHERE b.status <> 'cancelled' AND (b.payment_approval IS NULL OR b.payment_approval = 'creation_approved')
 GROUP BY b.workspace_id, b.competence_date, b.kind, b.company_id, COALESCE(b.category_id, '');
INSERT INTO report_ledger_cash (workspace_id, day, side, company_id, category_key, amount_cents)
SELECT x.workspace_id, x.day, x.side, x.company_id, x.category_key, SUM(x.amount_cents)
  FROM (SELECT t.workspace_id, t.occurred_at AS day, CASE WHEN t.transfer_id IS NOT NULL THEN CASE WHEN t.transaction_type = 'credit' THEN 'transfer_in' ELSE 'transfer_out' END WHEN t.transaction_type = 'credit' THEN 'revenue' ELSE 'expense' END AS side,
               t.company_id, COALESCE(t.category_id, '') AS category_key, t.amount_cents
          FROM financial_transactions t
         WHERE t.is_pending = 0) x
 GROUP BY x.workspace_id, x.day, x.side, x.company_id, x.category_key;
INSERT INTO report_ledger_competence (workspace_id, day, side, company_id, category_key, amount_cents)
SELECT x.workspace_id, x.day, x.side, x.company_id, x.category_key, SUM(x.amount_cents)
  FROM (SELECT t.workspace_id, COALESCE(t.competence_date, t.occurred_at) AS day, CASE WHEN t.transfer_id IS NOT NULL THEN CASE WHEN t.transaction_type = 'credit' THEN 'transfer_in' ELSE 'transfer_out' END WHEN t.transaction_type = 'credit' THEN 'revenue' ELSE 'expense' END AS side,
               t.company_id, COALESCE(t.category_id, '') AS category_key, t.amount_cents
          FROM financial_transactions t
         WHERE t.is_pending = 0 AND t.billing_id IS NULL AND NOT EXISTS (SELECT 1 FROM reconciliation_members m WHERE m.member_type = 'transaction' AND m.member_id = t.id)) x
 GROUP BY x.workspace_id, x.day, x.side, x.company_id, x.category_key;
