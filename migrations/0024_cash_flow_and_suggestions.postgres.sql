-- The cash flow's running totals, kept by the database as the reports' are (migration
-- 0014): a trigger adds a row's part when it is written and takes it back when it
-- changes or goes, in the same transaction. The cash flow then sums a few rows per day
-- instead of every movement and bill.
--
-- cash_flow_days: by day, company, account and reach, the posted credits and debits
-- (`posted_in`, `posted_out`) and what is expected (`pending_in`, `pending_out`).
-- * reach `own`: the movements that are no transfer leg, by their day and account;
-- * `transfer`: the transfer legs no other leg of their transfer shares the company of
--   (between companies): money leaving or entering the company;
-- * `internal`: the transfer legs another leg of their transfer shares the company of:
--   money staying in the company. A leg's reach depends on its pair, so writing a leg
--   moves its pair's part too;
-- * `bill`: the pending bills owed (all but those a person rejected at the approval
--   gate, `OWED`), by due day and the account they settle in or, naming none, their
--   forecast account ('' for none): receivables in `pending_in`, payables in
--   `pending_out`.
-- The workspace's flow is `own` and `bill`; a company's all but `internal`; an
-- account's every reach of its own. A total that drops to zero keeps its row.

CREATE TABLE cash_flow_days (
    workspace_id TEXT NOT NULL,
    day          TEXT NOT NULL,
    company_id   TEXT NOT NULL,
    account_key  TEXT NOT NULL,
    reach        TEXT NOT NULL,
    posted_in    BIGINT NOT NULL,
    posted_out   BIGINT NOT NULL,
    pending_in   BIGINT NOT NULL,
    pending_out  BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, day, company_id, account_key, reach)
);

CREATE FUNCTION cash_flow_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO cash_flow_days (workspace_id, day, company_id, account_key, reach, posted_in, posted_out, pending_in, pending_out)
                SELECT OLD.workspace_id, OLD.occurred_at, OLD.company_id, OLD.financial_account_id,
                       CASE WHEN OLD.transfer_id IS NULL THEN 'own' WHEN EXISTS (SELECT 1 FROM financial_transactions o WHERE o.workspace_id = OLD.workspace_id AND o.transfer_id = OLD.transfer_id AND o.company_id = OLD.company_id AND o.id <> OLD.id) THEN 'internal' ELSE 'transfer' END,
                       CASE WHEN OLD.is_pending = 0 AND OLD.transaction_type = 'credit' THEN -OLD.amount_cents ELSE 0 END, CASE WHEN OLD.is_pending = 0 AND OLD.transaction_type = 'debit' THEN -OLD.amount_cents ELSE 0 END,
                       CASE WHEN OLD.is_pending = 1 AND OLD.transaction_type = 'credit' THEN -OLD.amount_cents ELSE 0 END, CASE WHEN OLD.is_pending = 1 AND OLD.transaction_type = 'debit' THEN -OLD.amount_cents ELSE 0 END
                 WHERE true
                ON CONFLICT (workspace_id, day, company_id, account_key, reach) DO UPDATE
                SET posted_in = cash_flow_days.posted_in + excluded.posted_in,
                    posted_out = cash_flow_days.posted_out + excluded.posted_out,
                    pending_in = cash_flow_days.pending_in + excluded.pending_in,
                    pending_out = cash_flow_days.pending_out + excluded.pending_out;
        INSERT INTO cash_flow_days (workspace_id, day, company_id, account_key, reach, posted_in, posted_out, pending_in, pending_out)
                SELECT o.workspace_id, o.occurred_at, o.company_id, o.financial_account_id, m.reach,
                       SUM(m.sign * CASE WHEN o.is_pending = 0 AND o.transaction_type = 'credit' THEN o.amount_cents ELSE 0 END), SUM(m.sign * CASE WHEN o.is_pending = 0 AND o.transaction_type = 'debit' THEN o.amount_cents ELSE 0 END),
                       SUM(m.sign * CASE WHEN o.is_pending = 1 AND o.transaction_type = 'credit' THEN o.amount_cents ELSE 0 END), SUM(m.sign * CASE WHEN o.is_pending = 1 AND o.transaction_type = 'debit' THEN o.amount_cents ELSE 0 END)
                  FROM financial_transactions o, (SELECT 'internal' AS reach, -1 AS sign UNION ALL SELECT 'transfer', 1) m
                 WHERE OLD.transfer_id IS NOT NULL AND o.transfer_id = OLD.transfer_id AND o.workspace_id = OLD.workspace_id
                   AND o.company_id = OLD.company_id AND o.id <> OLD.id
                   AND NOT EXISTS (SELECT 1 FROM financial_transactions p WHERE p.workspace_id = o.workspace_id AND p.transfer_id = o.transfer_id
                                    AND p.company_id = o.company_id AND p.id <> o.id AND p.id <> OLD.id)
                 GROUP BY o.workspace_id, o.occurred_at, o.company_id, o.financial_account_id, m.reach
                ON CONFLICT (workspace_id, day, company_id, account_key, reach) DO UPDATE
                SET posted_in = cash_flow_days.posted_in + excluded.posted_in,
                    posted_out = cash_flow_days.posted_out + excluded.posted_out,
                    pending_in = cash_flow_days.pending_in + excluded.pending_in,
                    pending_out = cash_flow_days.pending_out + excluded.pending_out;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO cash_flow_days (workspace_id, day, company_id, account_key, reach, posted_in, posted_out, pending_in, pending_out)
                SELECT NEW.workspace_id, NEW.occurred_at, NEW.company_id, NEW.financial_account_id, CASE WHEN NEW.transfer_id IS NULL THEN 'own' WHEN EXISTS (SELECT 1 FROM financial_transactions o WHERE o.workspace_id = NEW.workspace_id AND o.transfer_id = NEW.transfer_id AND o.company_id = NEW.company_id AND o.id <> NEW.id) THEN 'internal' ELSE 'transfer' END,
                       CASE WHEN NEW.is_pending = 0 AND NEW.transaction_type = 'credit' THEN NEW.amount_cents ELSE 0 END, CASE WHEN NEW.is_pending = 0 AND NEW.transaction_type = 'debit' THEN NEW.amount_cents ELSE 0 END,
                       CASE WHEN NEW.is_pending = 1 AND NEW.transaction_type = 'credit' THEN NEW.amount_cents ELSE 0 END, CASE WHEN NEW.is_pending = 1 AND NEW.transaction_type = 'debit' THEN NEW.amount_cents ELSE 0 END
                 WHERE true
                ON CONFLICT (workspace_id, day, company_id, account_key, reach) DO UPDATE
                SET posted_in = cash_flow_days.posted_in + excluded.posted_in,
                    posted_out = cash_flow_days.posted_out + excluded.posted_out,
                    pending_in = cash_flow_days.pending_in + excluded.pending_in,
                    pending_out = cash_flow_days.pending_out + excluded.pending_out;
        INSERT INTO cash_flow_days (workspace_id, day, company_id, account_key, reach, posted_in, posted_out, pending_in, pending_out)
                SELECT o.workspace_id, o.occurred_at, o.company_id, o.financial_account_id, m.reach,
                       SUM(m.sign * CASE WHEN o.is_pending = 0 AND o.transaction_type = 'credit' THEN o.amount_cents ELSE 0 END), SUM(m.sign * CASE WHEN o.is_pending = 0 AND o.transaction_type = 'debit' THEN o.amount_cents ELSE 0 END),
                       SUM(m.sign * CASE WHEN o.is_pending = 1 AND o.transaction_type = 'credit' THEN o.amount_cents ELSE 0 END), SUM(m.sign * CASE WHEN o.is_pending = 1 AND o.transaction_type = 'debit' THEN o.amount_cents ELSE 0 END)
                  FROM financial_transactions o, (SELECT 'transfer' AS reach, -1 AS sign UNION ALL SELECT 'internal', 1) m
                 WHERE NEW.transfer_id IS NOT NULL AND o.transfer_id = NEW.transfer_id AND o.workspace_id = NEW.workspace_id
                   AND o.company_id = NEW.company_id AND o.id <> NEW.id
                   AND NOT EXISTS (SELECT 1 FROM financial_transactions p WHERE p.workspace_id = o.workspace_id AND p.transfer_id = o.transfer_id
                                    AND p.company_id = o.company_id AND p.id <> o.id AND p.id <> NEW.id)
                 GROUP BY o.workspace_id, o.occurred_at, o.company_id, o.financial_account_id, m.reach
                ON CONFLICT (workspace_id, day, company_id, account_key, reach) DO UPDATE
                SET posted_in = cash_flow_days.posted_in + excluded.posted_in,
                    posted_out = cash_flow_days.posted_out + excluded.posted_out,
                    pending_in = cash_flow_days.pending_in + excluded.pending_in,
                    pending_out = cash_flow_days.pending_out + excluded.pending_out;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER cash_flow_transactions_write AFTER INSERT OR DELETE ON financial_transactions FOR EACH ROW EXECUTE FUNCTION cash_flow_transactions();
CREATE TRIGGER cash_flow_transactions_update AFTER UPDATE OF is_pending, amount_cents, occurred_at, transaction_type, transfer_id, company_id, financial_account_id, workspace_id ON financial_transactions FOR EACH ROW EXECUTE FUNCTION cash_flow_transactions();

CREATE FUNCTION cash_flow_billings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO cash_flow_days (workspace_id, day, company_id, account_key, reach, posted_in, posted_out, pending_in, pending_out)
                SELECT OLD.workspace_id, OLD.due_date, OLD.company_id, COALESCE(OLD.financial_account_id, OLD.expected_account_id, ''), 'bill', 0, 0,
                       CASE WHEN OLD.kind = 'receivable' THEN -OLD.amount_cents ELSE 0 END, CASE WHEN OLD.kind = 'payable' THEN -OLD.amount_cents ELSE 0 END
                 WHERE OLD.status = 'pending' AND COALESCE(OLD.payment_approval, '') <> 'creation_rejected'
                ON CONFLICT (workspace_id, day, company_id, account_key, reach) DO UPDATE
                SET posted_in = cash_flow_days.posted_in + excluded.posted_in,
                    posted_out = cash_flow_days.posted_out + excluded.posted_out,
                    pending_in = cash_flow_days.pending_in + excluded.pending_in,
                    pending_out = cash_flow_days.pending_out + excluded.pending_out;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO cash_flow_days (workspace_id, day, company_id, account_key, reach, posted_in, posted_out, pending_in, pending_out)
                SELECT NEW.workspace_id, NEW.due_date, NEW.company_id, COALESCE(NEW.financial_account_id, NEW.expected_account_id, ''), 'bill', 0, 0,
                       CASE WHEN NEW.kind = 'receivable' THEN NEW.amount_cents ELSE 0 END, CASE WHEN NEW.kind = 'payable' THEN NEW.amount_cents ELSE 0 END
                 WHERE NEW.status = 'pending' AND COALESCE(NEW.payment_approval, '') <> 'creation_rejected'
                ON CONFLICT (workspace_id, day, company_id, account_key, reach) DO UPDATE
                SET posted_in = cash_flow_days.posted_in + excluded.posted_in,
                    posted_out = cash_flow_days.posted_out + excluded.posted_out,
                    pending_in = cash_flow_days.pending_in + excluded.pending_in,
                    pending_out = cash_flow_days.pending_out + excluded.pending_out;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER cash_flow_billings_write AFTER INSERT OR DELETE ON billings FOR EACH ROW EXECUTE FUNCTION cash_flow_billings();
CREATE TRIGGER cash_flow_billings_update AFTER UPDATE OF status, payment_approval, amount_cents, due_date, kind, company_id, financial_account_id, expected_account_id, workspace_id ON billings FOR EACH ROW EXECUTE FUNCTION cash_flow_billings();

-- What is there already.
INSERT INTO cash_flow_days (workspace_id, day, company_id, account_key, reach, posted_in, posted_out, pending_in, pending_out)
SELECT x.workspace_id, x.day, x.company_id, x.account_key, x.reach,
       CAST(SUM(x.posted_in) AS BIGINT), CAST(SUM(x.posted_out) AS BIGINT), CAST(SUM(x.pending_in) AS BIGINT), CAST(SUM(x.pending_out) AS BIGINT)
  FROM (SELECT t.workspace_id, t.occurred_at AS day, t.company_id, t.financial_account_id AS account_key, CASE WHEN t.transfer_id IS NULL THEN 'own' WHEN EXISTS (SELECT 1 FROM financial_transactions o WHERE o.workspace_id = t.workspace_id AND o.transfer_id = t.transfer_id AND o.company_id = t.company_id AND o.id <> t.id) THEN 'internal' ELSE 'transfer' END AS reach,
               CASE WHEN t.is_pending = 0 AND t.transaction_type = 'credit' THEN t.amount_cents ELSE 0 END AS posted_in,
               CASE WHEN t.is_pending = 0 AND t.transaction_type = 'debit' THEN t.amount_cents ELSE 0 END AS posted_out,
               CASE WHEN t.is_pending = 1 AND t.transaction_type = 'credit' THEN t.amount_cents ELSE 0 END AS pending_in,
               CASE WHEN t.is_pending = 1 AND t.transaction_type = 'debit' THEN t.amount_cents ELSE 0 END AS pending_out
          FROM financial_transactions t
        UNION ALL
        SELECT b.workspace_id, b.due_date, b.company_id, COALESCE(b.financial_account_id, b.expected_account_id, ''), 'bill', 0, 0,
               CASE WHEN b.kind = 'receivable' THEN b.amount_cents ELSE 0 END, CASE WHEN b.kind = 'payable' THEN b.amount_cents ELSE 0 END
          FROM billings b
         WHERE b.status = 'pending' AND COALESCE(b.payment_approval, '') <> 'creation_rejected') x
 GROUP BY x.workspace_id, x.day, x.company_id, x.account_key, x.reach;

-- The reconciliation suggestions look up the pending bills of a company by the amounts
-- of the movements they match, in a window of due days: one short range per amount
-- instead of every pending bill of the window.
CREATE INDEX billings_pending_amounts ON billings (workspace_id, company_id, amount_cents, due_date) WHERE status = 'pending';
