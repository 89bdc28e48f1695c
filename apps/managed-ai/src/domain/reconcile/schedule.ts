import type { ManagedAiContext } from "../../db.js";
import { closeAllotments } from "../allotments/close.js";
import { sweepBudgetClaims } from "../budgets/settle.js";
import { reconcileUsage, type ReconcileReport } from "./reconcile.js";

export type ReconcilerOptions = {
  /** Connections for the advisory lock that makes one replica at a time do a pass. */
  pool: LockPool;
  intervalMs: number;
  reservedAfterSeconds: number;
  settledAfterSeconds?: number;
  limit?: number;
  /** Allotments close when idle this long, or this old (docs/decisions/0028). */
  allotmentIdleSeconds?: number;
  allotmentMaxAgeSeconds?: number;
  onPass?: (report: ReconcileReport | null) => void;
};

/**
 * Runs the reconciler once at start and then every `intervalMs` (never two
 * passes at once in a process; across replicas an advisory lock picks one).
 * A pass that fails (the database or the ledger down) is logged and the next
 * one tries again. `stop` waits for a pass under way.
 */
export function startReconciler(ctx: ManagedAiContext, options: ReconcilerOptions): { stop(): Promise<void>; runNow(): Promise<ReconcileReport | null> } {
  let current: Promise<ReconcileReport | null> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const pass = (): Promise<ReconcileReport | null> => {
    current ??= exclusively(options.pool, async () => {
      const report = await reconcileUsage({
        ctx,
        input: {
          reservedAfterSeconds: options.reservedAfterSeconds,
          ...(options.settledAfterSeconds ? { settledAfterSeconds: options.settledAfterSeconds } : {}),
          ...(options.limit ? { limit: options.limit } : {}),
        },
      });
      // Budget claims follow their records' end states, whoever set them (docs/decisions/0024).
      await sweepBudgetClaims({ ctx, input: {} }).catch((err: unknown) => ctx.logger.warn({ err }, "budget sweep failed; the next pass tries again"));
      // After the records: their orphans have holds of their own by now (docs/decisions/0028).
      await closeAllotments(ctx, { idleSeconds: options.allotmentIdleSeconds ?? 30, maxAgeSeconds: options.allotmentMaxAgeSeconds ?? 600 }).catch(
        (err: unknown) => ctx.logger.warn({ err }, "closing allotments failed; the next pass tries again"),
      );
      return report;
    })
      .catch((err: unknown) => {
        ctx.logger.warn({ err }, "reconciler pass failed; the next one tries again");
        return null;
      })
      .then((report) => {
        options.onPass?.(report);
        return report;
      })
      .finally(() => {
        current = undefined;
      });
    return current;
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void pass().finally(schedule), options.intervalMs);
    timer.unref();
  };
  void pass().finally(schedule);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
    runNow: pass,
  };
}

/** "mai_rec1": the reconciler's advisory lock key. */
const LOCK_KEY = "7881696681537135409";

/** Runs `fn` while holding a session advisory lock on one connection; null when another replica holds it. */
type LockPool = { connect(): Promise<{ query<R>(text: string, values: unknown[]): Promise<{ rows: R[] }>; release(): void }> };

async function exclusively<T>(pool: LockPool, fn: () => Promise<T>): Promise<T | null> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS locked", [LOCK_KEY]);
    if (!rows[0]?.locked) return null;
    try {
      return await fn();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1::bigint)", [LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}
