-- The legs of every transfer: the debit account gives the pending amount (or the
-- amount), the credit account takes the amount, and a capture below its hold
-- returns the rest to available. Zero legs are left out. They sum to zero.
-- Posts (held -u, revenue +u), releases (held -u, available +u) and an allotment's void
-- (held -left, available +left: its pending_units) follow from the same three rules.
--
-- Installed by 20261122170000_ledger_pending_posted.
CREATE OR REPLACE VIEW "entries" AS
SELECT t."id" AS "transfer_id", (row_number() OVER (PARTITION BY t."id" ORDER BY l."ord") - 1)::SMALLINT AS "leg", l."account", l."units"
FROM "transfers" t
CROSS JOIN LATERAL (VALUES
  (1, t."debit_account", -coalesce(t."pending_units", t."units")),
  (2, t."credit_account", t."units"),
  (3, 'available', coalesce(t."pending_units", t."units") - t."units")
) AS l ("ord", "account", "units")
WHERE l."units" <> 0;
