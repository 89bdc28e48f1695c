import type { ManagedAiContext } from "../context.js";
import type { LockPool } from "../ports.js";
import { closeAllotments } from "../allotments/close.js";
import { sweepBudgetClaims } from "../budgets/settle.js";
import { reconcilerWorkPending } from "./pending.js";
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
  /**
   * While passes find nothing to do and nothing that may become due (see
   * `reconcilerWorkPending`), and the process served no call in between, the wait
   * doubles from `intervalMs` up to this (default `intervalMs`: a fixed interval).
   */
  idleMaxMs?: number;
  /** Calls this process has served so far (the gRPC server's count): any new one brings the wait back to `intervalMs`. */
  activity?: () => number;
};

/**
 * Runs the reconciler once at start and then every `intervalMs` (never two
 * passes at once in a process; across replicas an advisory lock picks one).
 * An idle replica spaces its passes out (docs/decisions/0200): after a pass that
 * did nothing, found nothing pending in the database and saw no call served since
 * the previous one, the wait doubles up to `idleMaxMs`. Work this process starts is
 * a call, so its own requests are reconciled on the usual schedule; what another
 * replica leaves behind when it dies is found within its bound plus `idleMaxMs`.
 * A pass that fails (the database or the ledger down) is logged and the next
 * one tries again. `stop` waits for a pass under way.
 */
export function startReconciler(
  ctx: ManagedAiContext,
  options: ReconcilerOptions,
): { stop(): Promise<void>; runNow(): Promise<ReconcileReport | null>; nextWaitMs(): number } {
  let current: Promise<ReconcileReport | null> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let wait = options.intervalMs;
  let seen = options.activity?.() ?? 0;
  /** Did the last pass find something to do, or leave something that may fall due? */
  let busy = true;
  const pass = (): Promise<ReconcileReport | null> => {
    busy = true;
    current ??= ctx.store.reconciler
      .exclusively(options.pool, async () => {
        const report = await reconcileUsage({
          ctx,
          input: {
            reservedAfterSeconds: options.reservedAfterSeconds,
            ...(options.settledAfterSeconds ? { settledAfterSeconds: options.settledAfterSeconds } : {}),
            ...(options.limit ? { limit: options.limit } : {}),
          },
        });
        // Budget claims follow their records' end states, whoever set them (docs/decisions/0024).
        const swept = await sweepBudgetClaims({ ctx, input: {} }).catch((err: unknown) => {
          ctx.logger.warn({ err }, "budget sweep failed; the next pass tries again");
          return 1;
        });
        // After the records: their orphans have holds of their own by now (docs/decisions/0028).
        const closed = await closeAllotments({
          ctx,
          input: {
            idleSeconds: options.allotmentIdleSeconds ?? 30,
            maxAgeSeconds: options.allotmentMaxAgeSeconds ?? 600,
            // Well beyond a batch's linger and a ledger call: posts on their way are not replayed.
            postGraceSeconds: 15,
          },
        }).catch((err: unknown) => {
          ctx.logger.warn({ err }, "closing allotments failed; the next pass tries again");
          return null;
        });
        const didNothing =
          report.examined + report.checked + report.errors === 0 &&
          swept === 0 &&
          closed !== null &&
          closed.closing + closed.closed + closed.reposted + closed.abandoned + closed.waiting === 0;
        // Only when idle is there anything to ask; the answer decides the next wait.
        busy = !didNothing || (options.idleMaxMs !== undefined && (await reconcilerWorkPending(ctx).catch(() => true)));
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
    const calls = options.activity?.() ?? 0;
    // A pass that did not run to its end (failed, or another replica held the lock) counts as busy.
    wait = busy || calls !== seen ? options.intervalMs : Math.min(options.idleMaxMs ?? options.intervalMs, wait * 2);
    seen = calls;
    timer = setTimeout(() => void pass().finally(schedule), wait);
    timer.unref();
  };
  void pass().finally(schedule);
  return {
    nextWaitMs: () => wait,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
    runNow: pass,
  };
}
