import type { ManagedAiContext } from "../context.js";
import { isAppError } from "@gateway/errors";
import { applicableBudgets } from "../budgets/applicable.js";
import type { Budget } from "../budgets/budget.js";
import { reserveBudgets } from "../budgets/reserve.js";
import { settleBudgets, settleBudgetsOf } from "../budgets/settle.js";
import type { Priced as Plan } from "./plan.js";
import { openReservation, settleCompleted, settleFailed, settleReview, type Opened, type OpenInput, type Usage } from "./settlement.js";

/**
 * The money side of one call, the same for every route and both modes, so the
 * provider and streaming code exist once:
 *  - managed: the usage record and the hold are taken when the meter opens
 *    (402 / 409 before any provider call) and settled through it;
 *  - byok: a usage record is written and settled the same way (tokens, cost
 *    at the instance's `config.pricing`, docs/decisions/0025) but no hold is
 *    taken and nothing is charged (the customer pays their provider).
 * Either way, the reservation first counts against the key's and the
 * instance's spend budgets (409 when one has no room, docs/decisions/0024),
 * and the record's end state settles those claims.
 */
export type Meter = {
  /** The provider reported usage: returns the final units (managed: charged, capped at the reservation). */
  completed(usage: Usage): Promise<bigint>;
  /** The provider failed: the hold is released. */
  failed(errorCode: string): Promise<void>;
  /** The outcome is unknown (no usage, the deadline passed): the hold stays for an operator. */
  review(errorCode: string): Promise<void>;
};

export async function openMeter({
  ctx,
  input: { plan, request: input },
}: {
  ctx: ManagedAiContext;
  input: { plan: Plan; request: OpenInput & { keyBudget?: Budget | null } };
}): Promise<Meter> {
  ctx.metrics?.planned(plan.modelAlias);
  const budgets = await applicableBudgets({ ctx, input: { tenantId: plan.tenantId, serviceAlias: plan.serviceAlias, keyBudget: input.keyBudget } });
  await reserveBudgets({ ctx, input: { requestId: input.requestId, tenantId: plan.tenantId, budgets, units: plan.reservedUnits } });
  // byok: recorded like a managed request, without a hold, and without Idempotency-Key enforcement (as before).
  const openInput = plan.mode === "byok" ? { ...input, idempotencyKey: null } : input;
  let opened: Opened;
  try {
    opened = await openReservation({ ctx, input: { plan, request: openInput } });
  } catch (err) {
    // Refused before any reservation (402, a used Idempotency-Key): the record is gone, so are its claims.
    // Other failures leave the record in review, and its claims with it (the sweep settles them with it).
    if (budgets.length > 0 && isAppError(err) && (err.code === "insufficient_balance" || err.code === "conflict")) {
      await settleBudgets({ ctx, input: { requestIds: [input.requestId], orphans: true } }).catch(() => undefined);
    }
    throw err;
  }
  // The claims follow the record's end state; a failure here is repaired by the sweep.
  const settled = async () => {
    if (budgets.length > 0)
      await settleBudgetsOf(ctx, input.requestId).catch((err: unknown) =>
        ctx.logger.warn({ err, request_id: input.requestId }, "budget settlement deferred to the sweep"),
      );
  };
  return {
    completed: async (usage) => {
      const units = await settleCompleted({ ctx, input: { opened, plan, usage } });
      await settled();
      ctx.metrics?.settled({
        tenantId: plan.tenantId,
        model: plan.modelAlias,
        chargedUnits: plan.mode === "managed" ? units : 0n,
        inputTokens: usage.promptTokens,
        outputTokens: usage.completionTokens,
      });
      return units;
    },
    failed: async (errorCode) => {
      await settleFailed({ ctx, input: { opened, errorCode } });
      await settled();
    },
    review: (errorCode) => settleReview({ ctx, input: { opened, plan, errorCode } }),
  };
}
