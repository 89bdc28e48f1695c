import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { LedgerContext } from "../../db.js";
import { toHoldView, type HoldRow, type HoldView } from "../accounts.js";
import { HoldId } from "../schemas.js";

export const GetHoldInput = z.object({ hold_id: HoldId });
export type GetHoldInput = z.input<typeof GetHoldInput>;

export async function getHold({ ctx, input }: { ctx: LedgerContext; input: GetHoldInput }): Promise<HoldView> {
  const { hold_id } = parseInput(GetHoldInput, input);
  const [row] = await ctx.prisma.$queryRawUnsafe<HoldRow[]>(
    "SELECT id, tenant_id, units, status, captured_units, expires_at, created_at, settled_at FROM holds WHERE id = $1",
    hold_id,
  );
  if (!row) throw new AppError("not_found", "No such hold.");
  return toHoldView(row);
}
