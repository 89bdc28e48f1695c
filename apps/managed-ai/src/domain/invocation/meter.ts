import type { ManagedAiContext } from "../../db.js";
import { costUnits } from "./cost.js";
import type { Priced as Plan } from "./plan.js";
import { openReservation, settleCompleted, settleFailed, settleReview, type OpenInput, type Usage } from "./settlement.js";

/**
 * The money side of one call, the same for every route and both modes, so the
 * provider and streaming code exist once:
 *  - managed: the usage record and the hold are taken when the meter opens
 *    (402 / 409 before any provider call) and settled through it;
 *  - byok: nothing is recorded or charged (the customer pays their provider);
 *    `completed` only prices the usage at the instance's `config.pricing`.
 */
export type Meter = {
  /**
   * Whether the provider call outlives a client that leaves: a metered call is
   * finished and settled on its usage (CONTRACT.md section 6); an unmetered one
   * (byok) is aborted, as nobody needs its answer any more.
   */
  outlivesClient: boolean;
  /** The provider reported usage: returns the final units (managed: charged, capped at the reservation). */
  completed(usage: Usage): Promise<bigint>;
  /** The provider failed: the hold is released. */
  failed(errorCode: string): Promise<void>;
  /** The outcome is unknown (no usage, the deadline passed): the hold stays for an operator. */
  review(errorCode: string): Promise<void>;
};

export async function openMeter(ctx: ManagedAiContext, plan: Plan, input: OpenInput): Promise<Meter> {
  if (plan.mode === "byok") {
    return {
      outlivesClient: false,
      completed: async (usage) => costUnits(usage.promptTokens, usage.completionTokens, plan.price, 0n),
      failed: async () => undefined,
      review: async () => undefined,
    };
  }
  const opened = await openReservation(ctx, plan, input);
  return {
    outlivesClient: true,
    completed: (usage) => settleCompleted(ctx, opened, plan, usage),
    failed: (errorCode) => settleFailed(ctx, opened, plan, errorCode),
    review: (errorCode) => settleReview(ctx, opened, plan, errorCode),
  };
}
