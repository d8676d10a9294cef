-- The most money a workspace's books hold, kept by the database itself, so that no total
-- a read computes — an account's balance, a month's aggregates, a cash flow, a report —
-- can pass what a 64-bit count of cents holds (92,233,720,368,547,758.07): every amount
-- the reads sum (bills, movements, opening balances), taken whole, adds up to at most
-- 10^17 cents (R$ 1.000.000.000.000.000,00) per workspace, and any subset's sum is within
-- that. A write that would pass it fails with 'kfin:volume_exceeded' and changes nothing
-- (the application answers 422 `total_out_of_range`).
--
-- The volume is kept in parts, one row per account (its opening balance and its
-- movements) and one per company's bills, so writes to different accounts do not wait
-- for each other; the check sums the workspace's parts (a few rows).

CREATE TABLE workspace_volume (
    workspace_id TEXT NOT NULL,
    part         TEXT NOT NULL,
    cents        INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, part)
) WITHOUT ROWID;

CREATE TRIGGER volume_accounts_insert AFTER INSERT ON financial_accounts
WHEN NEW.opening_balance_cents <> 0 BEGIN
    INSERT INTO workspace_volume (workspace_id, part, cents) VALUES (NEW.workspace_id, 'account:' || NEW.id, ABS(NEW.opening_balance_cents))
        ON CONFLICT (workspace_id, part) DO UPDATE SET cents = workspace_volume.cents + excluded.cents;
    SELECT RAISE(ABORT, 'kfin:volume_exceeded')
     WHERE (SELECT SUM(cents) FROM workspace_volume WHERE workspace_id = NEW.workspace_id) > 100000000000000000;
END;

CREATE TRIGGER volume_accounts_update AFTER UPDATE OF opening_balance_cents ON financial_accounts
WHEN OLD.opening_balance_cents <> NEW.opening_balance_cents BEGIN
    INSERT INTO workspace_volume (workspace_id, part, cents)
        VALUES (NEW.workspace_id, 'account:' || NEW.id, ABS(NEW.opening_balance_cents) - ABS(OLD.opening_balance_cents))
        ON CONFLICT (workspace_id, part) DO UPDATE SET cents = workspace_volume.cents + excluded.cents;
    SELECT RAISE(ABORT, 'kfin:volume_exceeded')
     WHERE (SELECT SUM(cents) FROM workspace_volume WHERE workspace_id = NEW.workspace_id) > 100000000000000000;
END;

CREATE TRIGGER volume_accounts_delete AFTER DELETE ON financial_accounts BEGIN
    DELETE FROM workspace_volume WHERE workspace_id = OLD.workspace_id AND part = 'account:' || OLD.id;
END;

CREATE TRIGGER volume_transactions_insert AFTER INSERT ON financial_transactions BEGIN
    INSERT INTO workspace_volume (workspace_id, part, cents) VALUES (NEW.workspace_id, 'account:' || NEW.financial_account_id, NEW.amount_cents)
        ON CONFLICT (workspace_id, part) DO UPDATE SET cents = workspace_volume.cents + excluded.cents;
    SELECT RAISE(ABORT, 'kfin:volume_exceeded')
     WHERE (SELECT SUM(cents) FROM workspace_volume WHERE workspace_id = NEW.workspace_id) > 100000000000000000;
END;

CREATE TRIGGER volume_transactions_update AFTER UPDATE OF amount_cents, financial_account_id ON financial_transactions
WHEN OLD.amount_cents <> NEW.amount_cents OR OLD.financial_account_id <> NEW.financial_account_id BEGIN
    UPDATE workspace_volume SET cents = cents - OLD.amount_cents
     WHERE workspace_id = OLD.workspace_id AND part = 'account:' || OLD.financial_account_id;
    INSERT INTO workspace_volume (workspace_id, part, cents) VALUES (NEW.workspace_id, 'account:' || NEW.financial_account_id, NEW.amount_cents)
        ON CONFLICT (workspace_id, part) DO UPDATE SET cents = workspace_volume.cents + excluded.cents;
    SELECT RAISE(ABORT, 'kfin:volume_exceeded')
     WHERE (SELECT SUM(cents) FROM workspace_volume WHERE workspace_id = NEW.workspace_id) > 100000000000000000;
END;

CREATE TRIGGER volume_transactions_delete AFTER DELETE ON financial_transactions BEGIN
    UPDATE workspace_volume SET cents = cents - OLD.amount_cents
     WHERE workspace_id = OLD.workspace_id AND part = 'account:' || OLD.financial_account_id;
END;

CREATE TRIGGER volume_billings_insert AFTER INSERT ON billings BEGIN
    INSERT INTO workspace_volume (workspace_id, part, cents) VALUES (NEW.workspace_id, 'bills:' || NEW.company_id, NEW.amount_cents)
        ON CONFLICT (workspace_id, part) DO UPDATE SET cents = workspace_volume.cents + excluded.cents;
    SELECT RAISE(ABORT, 'kfin:volume_exceeded')
     WHERE (SELECT SUM(cents) FROM workspace_volume WHERE workspace_id = NEW.workspace_id) > 100000000000000000;
END;

CREATE TRIGGER volume_billings_update AFTER UPDATE OF amount_cents, company_id ON billings
WHEN OLD.amount_cents <> NEW.amount_cents OR OLD.company_id <> NEW.company_id BEGIN
    UPDATE workspace_volume SET cents = cents - OLD.amount_cents
     WHERE workspace_id = OLD.workspace_id AND part = 'bills:' || OLD.company_id;
    INSERT INTO workspace_volume (workspace_id, part, cents) VALUES (NEW.workspace_id, 'bills:' || NEW.company_id, NEW.amount_cents)
        ON CONFLICT (workspace_id, part) DO UPDATE SET cents = workspace_volume.cents + excluded.cents;
    SELECT RAISE(ABORT, 'kfin:volume_exceeded')
     WHERE (SELECT SUM(cents) FROM workspace_volume WHERE workspace_id = NEW.workspace_id) > 100000000000000000;
END;

CREATE TRIGGER volume_billings_delete AFTER DELETE ON billings BEGIN
    UPDATE workspace_volume SET cents = cents - OLD.amount_cents
     WHERE workspace_id = OLD.workspace_id AND part = 'bills:' || OLD.company_id;
END;

-- What is there already (a workspace already past the bound keeps its books; its next
-- write that adds to them is refused).
INSERT INTO workspace_volume (workspace_id, part, cents)
SELECT workspace_id, part, SUM(cents) FROM (
    SELECT workspace_id, 'account:' || id AS part, ABS(opening_balance_cents) AS cents FROM financial_accounts
    UNION ALL SELECT workspace_id, 'account:' || financial_account_id, amount_cents FROM financial_transactions
    UNION ALL SELECT workspace_id, 'bills:' || company_id, amount_cents FROM billings
) GROUP BY workspace_id, part;
