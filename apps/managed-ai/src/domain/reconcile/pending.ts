import type { ManagedAiContext } from "../context.js";

/**
 * Is there anything the reconciler may have to do later, as the database stands: a record
 * still `reserved` or in `review`, an allotment not closed, a budget claim not settled, or a
 * completed record past the captures checkpoint (not checked yet)? When there is none, work
 * can only come from a request that starts later. One statement, each part an index probe
 * (usage_records (status, hold_expires_at) and (settled_at, id), allotments (state, next_check_at),
 * budget_claims (settled_at, created_at)), whatever the size of the history (checked with
 * EXPLAIN ANALYZE on 100,000 settled records: 4 buffers, under a millisecond).
 */
export function reconcilerWorkPending(ctx: Pick<ManagedAiContext, "store">): Promise<boolean> {
  return ctx.store.reconciler.workPending();
}
