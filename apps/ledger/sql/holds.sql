-- Holds, derived from the journal: a pending transfer (kind 'reserve', its hold_id the
-- hold's id) and the settlement that names it, if any. An allotment shows its posts as
-- its captured units and its releases (and, at its void, what was left) as released.
--
-- History: 20261122170000_ledger_pending_posted (holds became a view),
-- 20261125180000_ledger_allotments.
CREATE OR REPLACE VIEW "holds" AS
SELECT r."hold_id" AS "id", r."tenant_id", r."units",
       CASE s."kind" WHEN 'capture' THEN 'captured' WHEN 'void' THEN 'voided' ELSE 'open' END AS "status",
       CASE WHEN al."hold_id" IS NOT NULL THEN al."posted" WHEN s."kind" = 'capture' THEN s."units" END AS "captured_units",
       r."expires_at", s."id" AS "settled_by", r."created_at", s."created_at" AS "settled_at",
       CASE
         WHEN al."hold_id" IS NOT NULL THEN al."released" + CASE WHEN s."kind" = 'void' THEN s."units" ELSE 0 END
         WHEN s."kind" = 'capture' THEN r."units" - s."units"
         WHEN s."kind" = 'void' THEN r."units"
         ELSE 0
       END AS "released_units",
       al."hold_id" IS NOT NULL AS "allotment"
FROM "transfers" r
LEFT JOIN "transfers" s ON s."hold_id" = r."hold_id" AND s."kind" IN ('capture', 'void')
LEFT JOIN "allotments" al ON al."hold_id" = r."hold_id"
WHERE r."kind" = 'reserve';
