-- The most money a workspace's books hold, kept by the database itself (the SQLite
-- migration says why and how): every amount the reads sum adds up to at most 10^17 cents
-- per workspace; a write that would pass it fails with SQLSTATE 22003 and the message
-- 'kfin:volume_exceeded', and changes nothing.

CREATE TABLE workspace_volume (
    workspace_id TEXT NOT NULL,
    part         TEXT NOT NULL,
    cents        BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, part)
);

CREATE FUNCTION volume_add(workspace TEXT, part_key TEXT, delta BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF delta = 0 THEN
        RETURN;
    END IF;
    INSERT INTO workspace_volume (workspace_id, part, cents) VALUES (workspace, part_key, delta)
        ON CONFLICT (workspace_id, part) DO UPDATE SET cents = workspace_volume.cents + excluded.cents;
    IF delta > 0 AND (SELECT SUM(cents) FROM workspace_volume WHERE workspace_id = workspace) > 100000000000000000 THEN
        RAISE EXCEPTION 'kfin:volume_exceeded' USING ERRCODE = '22003';
    END IF;
END
$$;

CREATE FUNCTION volume_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM workspace_volume WHERE workspace_id = OLD.workspace_id AND part = 'account:' || OLD.id;
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM volume_add(NEW.workspace_id, 'account:' || NEW.id, ABS(NEW.opening_balance_cents) - ABS(OLD.opening_balance_cents));
    ELSE
        PERFORM volume_add(NEW.workspace_id, 'account:' || NEW.id, ABS(NEW.opening_balance_cents));
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER volume_accounts_write AFTER INSERT OR DELETE ON financial_accounts FOR EACH ROW EXECUTE FUNCTION volume_accounts();
CREATE TRIGGER volume_accounts_update AFTER UPDATE OF opening_balance_cents ON financial_accounts FOR EACH ROW
    WHEN (OLD.opening_balance_cents IS DISTINCT FROM NEW.opening_balance_cents) EXECUTE FUNCTION volume_accounts();

CREATE FUNCTION volume_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM volume_add(OLD.workspace_id, 'account:' || OLD.financial_account_id, -OLD.amount_cents);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM volume_add(NEW.workspace_id, 'account:' || NEW.financial_account_id, NEW.amount_cents);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER volume_transactions_write AFTER INSERT OR DELETE ON financial_transactions FOR EACH ROW EXECUTE FUNCTION volume_transactions();
CREATE TRIGGER volume_transactions_update AFTER UPDATE OF amount_cents, financial_account_id ON financial_transactions FOR EACH ROW
    WHEN (OLD.amount_cents IS DISTINCT FROM NEW.amount_cents OR OLD.financial_account_id IS DISTINCT FROM NEW.financial_account_id)
    EXECUTE FUNCTION volume_transactions();

CREATE FUNCTION volume_billings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM volume_add(OLD.workspace_id, 'bills:' || OLD.company_id, -OLD.amount_cents);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM volume_add(NEW.workspace_id, 'bills:' || NEW.company_id, NEW.amount_cents);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER volume_billings_write AFTER INSERT OR DELETE ON billings FOR EACH ROW EXECUTE FUNCTION volume_billings();
CREATE TRIGGER volume_billings_update AFTER UPDATE OF amount_cents, company_id ON billings FOR EACH ROW
    WHEN (OLD.amount_cents IS DISTINCT FROM NEW.amount_cents OR OLD.company_id IS DISTINCT FROM NEW.company_id)
    EXECUTE FUNCTION volume_billings();

-- What is there already.
INSERT INTO workspace_volume (workspace_id, part, cents)
SELECT workspace_id, part, SUM(cents) FROM (
    SELECT workspace_id, 'account:' || id AS part, ABS(opening_balance_cents) AS cents FROM financial_accounts
    UNION ALL SELECT workspace_id, 'account:' || financial_account_id, amount_cents FROM financial_transactions
    UNION ALL SELECT workspace_id, 'bills:' || company_id, amount_cents FROM billings
) volume GROUP BY workspace_id, part;
