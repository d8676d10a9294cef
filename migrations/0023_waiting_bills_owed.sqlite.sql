-- A payable waiting at the approval gate is an obligation the books carry: the reports
-- count it as they count an official bill (the aging while it is pending, the income
-- statement on the competence basis); only a rejected one (`creation_rejected`, blocked
-- for good) is left out. The billings' triggers take the new condition and the totals
-- of the bills are summed again from the rows.

DROP TRIGGER report_billings_insert;
DROP TRIGGER report_billings_delete;
DROP TRIGGER report_billings_update;

CREATE TRIGGER report_billings_insert AFTER INSERT ON billings BEGIN
    INSERT INTO report_open_bills (workspace_id, kind, due_date, company_id, person_key, bills, amount_cents)
            SELECT NEW.workspace_id, NEW.kind, NEW.due_date, NEW.company_id, COALESCE(NEW.person_id, ''), 1, NEW.amount_cents
             WHERE NEW.status = 'pending' AND COALESCE(NEW.payment_approval, '') <> 'creation_rejected'
            ON CONFLICT (workspace_id, kind, due_date, company_id, person_key) DO UPDATE
            SET bills = report_open_bills.bills + excluded.bills,
                amount_cents = report_open_bills.amount_cents + excluded.amount_cents;
    INSERT INTO report_bill_competence (workspace_id, day, kind, company_id, category_key, amount_cents)
            SELECT NEW.workspace_id, NEW.competence_date, NEW.kind, NEW.company_id, COALESCE(NEW.category_id, ''), NEW.amount_cents
             WHERE NEW.status <> 'cancelled' AND COALESCE(NEW.payment_approval, '') <> 'creation_rejected'
            ON CONFLICT (workspace_id, day, kind, company_id, category_key) DO UPDATE
            SET amount_cents = report_bill_competence.amount_cents + excluded.amount_cents;
END;

CREATE TRIGGER report_billings_delete AFTER DELETE ON billings BEGIN
    INSERT INTO report_open_bills (workspace_id, kind, due_date, company_id, person_key, bills, amount_cents)
            SELECT OLD.workspace_id, OLD.kind, OLD.due_date, OLD.company_id, COALESCE(OLD.person_id, ''), -1, -OLD.amount_cents
             WHERE OLD.status = 'pending' AND COALESCE(OLD.payment_approval, '') <> 'creation_rejected'
            ON CONFLICT (workspace_id, kind, due_date, company_id, person_key) DO UPDATE
            SET bills = report_open_bills.bills + excluded.bills,
                amount_cents = report_open_bills.amount_cents + excluded.amount_cents;
    INSERT INTO report_bill_competence (workspace_id, day, kind, company_id, category_key, amount_cents)
            SELECT OLD.workspace_id, OLD.competence_date, OLD.kind, OLD.company_id, COALESCE(OLD.category_id, ''), -OLD.amount_cents
             WHERE OLD.status <> 'cancelled' AND COALESCE(OLD.payment_approval, '') <> 'creation_rejected'
            ON CONFLICT (workspace_id, day, kind, company_id, category_key) DO UPDATE
            SET amount_cents = report_bill_competence.amount_cents + excluded.amount_cents;
END;

CREATE TRIGGER report_billings_update AFTER UPDATE OF status, payment_approval, amount_cents, due_date, competence_date, person_id, category_id, company_id, kind, workspace_id ON billings BEGIN
    INSERT INTO report_open_bills (workspace_id, kind, due_date, company_id, person_key, bills, amount_cents)
            SELECT OLD.workspace_id, OLD.kind, OLD.due_date, OLD.company_id, COALESCE(OLD.person_id, ''), -1, -OLD.amount_cents
             WHERE OLD.status = 'pending' AND COALESCE(OLD.payment_approval, '') <> 'creation_rejected'
            ON CONFLICT (workspace_id, kind, due_date, company_id, person_key) DO UPDATE
            SET bills = report_open_bills.bills + excluded.bills,
                amount_cents = report_open_bills.amount_cents + excluded.amount_cents;
    INSERT INTO report_bill_competence (workspace_id, day, kind, company_id, category_key, amount_cents)
            SELECT OLD.workspace_id, OLD.competence_date, OLD.kind, OLD.company_id, COALESCE(OLD.category_id, ''), -OLD.amount_cents
             WHERE OLD.status <> 'cancelled' AND COALESCE(OLD.payment_approval, '') <> 'creation_rejected'
            ON CONFLICT (workspace_id, day, kind, company_id, category_key) DO UPDATE
            SET amount_cents = report_bill_competence.amount_cents + excluded.amount_cents;
    INSERT INTO report_open_bills (workspace_id, kind, due_date, company_id, person_key, bills, amount_cents)
            SELECT NEW.workspace_id, NEW.kind, NEW.due_date, NEW.company_id, COALESCE(NEW.person_id, ''), 1, NEW.amount_cents
             WHERE NEW.status = 'pending' AND COALESCE(NEW.payment_approval, '') <> 'creation_rejected'
            ON CONFLICT (workspace_id, kind, due_date, company_id, person_key) DO UPDATE
            SET bills = report_open_bills.bills + excluded.bills,
                amount_cents = report_open_bills.amount_cents + excluded.amount_cents;
    INSERT INTO report_bill_competence (workspace_id, day, kind, company_id, category_key, amount_cents)
            SELECT NEW.workspace_id, NEW.competence_date, NEW.kind, NEW.company_id, COALESCE(NEW.category_id, ''), NEW.amount_cents
             WHERE NEW.status <> 'cancelled' AND COALESCE(NEW.payment_approval, '') <> 'creation_rejected'
            ON CONFLICT (workspace_id, day, kind, company_id, category_key) DO UPDATE
            SET amount_cents = report_bill_competence.amount_cents + excluded.amount_cents;
END;

DELETE FROM report_open_bills;
DELETE FROM report_bill_competence;
INSERT INTO report_open_bills (workspace_id, kind, due_date, company_id, person_key, bills, amount_cents)
SELECT b.workspace_id, b.kind, b.due_date, b.company_id, COALESCE(b.person_id, ''), COUNT(*), SUM(b.amount_cents)
  FROM billings b
 WHERE b.status = 'pending' AND COALESCE(b.payment_approval, '') <> 'creation_rejected'
 GROUP BY b.workspace_id, b.kind, b.due_date, b.company_id, COALESCE(b.person_id, '');
INSERT INTO report_bill_competence (workspace_id, day, kind, company_id, category_key, amount_cents)
SELECT b.workspace_id, b.competence_date, b.kind, b.company_id, COALESCE(b.category_id, ''), SUM(b.amount_cents)
  FROM billings b
 WHERE b.status <> 'cancelled' AND COALESCE(b.payment_approval, '') <> 'creation_rejected'
 GROUP BY b.workspace_id, b.competence_date, b.kind, b.company_id, COALESCE(b.category_id, '');
