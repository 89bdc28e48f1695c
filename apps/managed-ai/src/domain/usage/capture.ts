import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { Actor, NonNegativeUnits, ResourceId } from "../schemas.js";
import { holdsOf } from "./hold.js";
import { decidable, findHold, recordDecision } from "./release.js";

export const CaptureUsageInput = z.object({ actor: Actor, id: ResourceId, units: NonNegativeUnits, reason: z.string().trim().min(1).max(240) });

/**
 * Operator capture, the other outcome of a record an operator decides
 * (docs/decisions/0177): the same records as release (a `review` record, or a
 * `reserved` one past its hold's expiry; anything else is a conflict), but
 * `units` (at most the reservation; more is 422) are charged and the rest of the
 * hold goes back. The record becomes `completed` with `final_units = units`;
 * audited with the reason.
 *
 * The ledger call is capture:<id>, the operation id settlement uses, so a
 * capture is taken at most once whoever sends it: a retry after a crash (the
 * ledger captured, the record was not told) is replayed, or, when the first
 * capture was sent with other parameters (another reason, the request's own
 * settlement), found on the hold; only a hold captured with other units is
 * refused (409, the record then says what the ledger captured).
 */
export async function captureUsage({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: z.input<typeof CaptureUsageInput>;
}): Promise<{ id: string; status: "completed"; finalUnits: bigint; refunded: bigint }> {
  const q = parseInput(CaptureUsageInput, input);
  // Checked before the record is fenced: a refused capture changes nothing.
  const row = await decidable(ctx, q.id, "captured", (r) => {
    if (q.units > r.reservedUnits) {
      throw new AppError("validation_failed", `units (${q.units}) must not exceed the reservation (${r.reservedUnits} units).`, { extra: { param: "units" } });
    }
  });

  let refunded = 0n;
  const hold = await findHold(ctx, row);
  if (!hold && row.reservedUnits > 0n && row.mode !== "byok") {
    // The reservation never happened (a replay that took it gave it back): the record fails
    // as a release would have it (nothing was ever held, nothing refunded).
    await ctx.prisma.usageRecord.updateMany({
      where: { id: row.id, status: row.status },
      data: { status: "failed", finalUnits: 0n, refundedUnits: 0n, errorCode: row.errorCode ?? "hold_expired", settledAt: new Date() },
    });
    throw new AppError("conflict", "The request never obtained its reservation: there was nothing to capture, and it is now failed.");
  }
  if (!hold && q.units > 0n) throw new AppError("conflict", "The request holds nothing (a free request): only 0 units can be captured.");
  if (hold) {
    const captured = await holdsOf(ctx).capture(row.id, hold.holdId, q.units, q.reason);
    if (captured.kind === "settled") {
      refunded = BigInt(captured.response.hold?.released_units ?? "0");
    } else {
      // capture:<id> was sent before with other parameters, or the hold was voided.
      const settled = captured.hold;
      if (settled.status === "voided") {
        await ctx.prisma.usageRecord.updateMany({
          where: { id: row.id, status: row.status },
          data: { status: "failed", holdId: hold.holdId, finalUnits: 0n, refundedUnits: BigInt(settled.released_units), settledAt: new Date() },
        });
        throw new AppError("conflict", "The request's hold was already released in the ledger; nothing to capture.");
      }
      if (settled.status !== "captured") throw captured.error;
      if (BigInt(settled.captured_units) !== q.units) {
        await ctx.prisma.usageRecord.updateMany({
          where: { id: row.id, status: row.status },
          data: { status: "completed", holdId: hold.holdId, finalUnits: BigInt(settled.captured_units), settledAt: new Date() },
        });
        throw new AppError("conflict", `The request was already captured in the ledger with ${settled.captured_units} units; nothing else to capture.`);
      }
      refunded = BigInt(settled.released_units);
    }
  }

  await recordDecision(ctx, row, { verb: "captured", holdId: hold?.holdId ?? null, finalUnits: q.units, refunded, actor: q.actor, reason: q.reason });
  return { id: row.id, status: "completed", finalUnits: q.units, refunded };
}
