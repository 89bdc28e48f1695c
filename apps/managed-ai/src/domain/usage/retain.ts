import { z } from "zod";
import type { ManagedAiContext } from "../context.js";
import type { MonthOutcome, RetentionPool } from "../ports.js";

export const RetainUsageInput = z.object({
  /** Records older than this many days leave, whole UTC months at a time (docs/decisions/0241). */
  retentionDays: z.number().int().min(1),
  /** Where each month's records go first: `<exportDir>/<YYYY-MM>/<tenant>.ndjson`. */
  exportDir: z.string().min(1),
  now: z.date().optional(),
});

/**
 * Usage retention (docs/decisions/0241): every UTC month that ended more than
 * `retentionDays` ago leaves the database, once its records are written out, one NDJSON
 * file per tenant. A month still holding a record whose money is not settled (`reserved`,
 * `review`) stays until it holds none. The ledger's journal keeps every entry: only the
 * usage records leave. One replica at a time (the reconciler's lock); null when another
 * replica holds it.
 */
export async function retainUsage({
  ctx,
  input,
  pool,
}: {
  ctx: ManagedAiContext;
  input: z.input<typeof RetainUsageInput>;
  pool: RetentionPool;
}): Promise<MonthOutcome[] | null> {
  const q = RetainUsageInput.parse(input);
  const now = q.now ?? new Date();
  // The month that holds the first day kept stays whole.
  const cutoff = monthStart(new Date(now.getTime() - q.retentionDays * 86_400_000));
  return ctx.store.reconciler.exclusively(pool, async () => {
    const outcomes: MonthOutcome[] = [];
    for (const month of await ctx.store.retention.monthsBefore(pool, cutoff)) {
      const outcome = await ctx.store.retention.exportAndDeleteMonth(pool, month, q.exportDir);
      if (outcome.outcome === "unsettled") ctx.logger.warn(outcome, "usage retention: a month still holds unsettled records; it leaves once they are settled");
      else if (outcome.outcome === "exported") ctx.logger.info(outcome, "usage retention: a month exported and removed");
      outcomes.push(outcome);
    }
    return outcomes;
  });
}

/** Runs `retainUsage` at start and then every `intervalMs`; `stop` waits for a pass under way. */
export function startRetention(
  ctx: ManagedAiContext,
  options: { pool: RetentionPool; retentionDays: number; exportDir: string; intervalMs?: number },
): { stop(): Promise<void> } {
  let current: Promise<unknown> | undefined;
  let stopped = false;
  const pass = () => {
    current ??= retainUsage({ ctx, input: { retentionDays: options.retentionDays, exportDir: options.exportDir }, pool: options.pool })
      .catch((err: unknown) => ctx.logger.warn({ err }, "usage retention pass failed; the next one tries again"))
      .finally(() => {
        current = undefined;
      });
  };
  pass();
  const timer = setInterval(() => {
    if (!stopped) pass();
  }, options.intervalMs ?? 3_600_000);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}

/** The first day (UTC) of `d`'s month. */
export function monthStart(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}
