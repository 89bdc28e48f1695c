import type { ManagedAiContext } from "../../db.js";

/**
 * Is there anything the reconciler may have to do later, as the database stands: a record
 * still `reserved` or in `review`, an allotment not closed, a budget claim not settled, or a
 * completed record past the captures checkpoint (not checked yet)? When there is none, work
 * can only come from a request that starts later. One statement, each part an index probe
 * (usage_records (status, hold_expires_at) and (settled_at, id), allotments (state, updated_at),
 * budget_claims (settled_at, created_at)), whatever the size of the history.
 */
export async function reconcilerWorkPending(ctx: Pick<ManagedAiContext, "sql">): Promise<boolean> {
  const [row] = await ctx.sql.query<{ pending: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM usage_records WHERE status IN ('reserved', 'review'))
         OR EXISTS (SELECT 1 FROM allotments WHERE state IN ('opening', 'open', 'closing'))
         OR EXISTS (SELECT 1 FROM budget_claims WHERE settled_at IS NULL)
         OR EXISTS (SELECT 1 FROM reconciler_checkpoints c JOIN usage_records u ON u.settled_at >= c.settled_at
                    WHERE c.name = 'captures' AND (u.settled_at > c.settled_at OR u.id > c.record_id)
                      AND u.status = 'completed' AND u.hold_id IS NOT NULL) AS pending`,
    [],
  );
  return row?.pending ?? true;
}
