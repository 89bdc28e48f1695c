import { BatchLoop } from "@gateway/events-runtime";
import type { JobsContext } from "../domain/context.js";
import { checkBalance } from "../domain/alerts/check-balance.js";

const BATCH = 20;

/**
 * Runs the balance checks that ledger events asked for (docs/decisions/0210): a round
 * reads the tenants whose `due_seq` is ahead of `checked_seq` and checks each. The
 * audit consumer kicks it after committing a batch that marked some; the poll (backing
 * off to OUTBOX_POLL_MAX_MS) only finds what a replica that died left unchecked.
 */
export function createBalanceChecks(ctx: JobsContext, options: { pollMs: number; maxPollMs: number }): BatchLoop {
  const log = ctx.logger.child({ component: "balance-alerts" });
  return new BatchLoop({
    round: async () => {
      const due = await ctx.prisma.$queryRawUnsafe<{ tenant_id: string }[]>(
        `SELECT tenant_id FROM account_alerts WHERE due_seq > checked_seq ORDER BY updated_at LIMIT ${BATCH}`,
      );
      for (const { tenant_id } of due) {
        const outcome = await checkBalance({ ctx, input: { tenantId: tenant_id } });
        if (outcome === "crossed") {
          log.info({ tenant_id }, "balance fell below the alert threshold: balance.low queued");
          ctx.accounts.kickDeliveries();
        }
      }
      return due.length;
    },
    batchSize: BATCH,
    pollMs: options.pollMs,
    maxPollMs: Math.max(options.pollMs, options.maxPollMs),
    lingerMs: 0,
    flushOnStop: false,
    log,
    messages: { failed: "balance check failed; retrying", finalFlushFailed: "balance check failed" },
  });
}
