import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import { toHoldView, toTransfer, type HoldRow, type HoldView, type Transfer, type TransferRow } from "../accounts.js";
import { HoldId, OperationId } from "../schemas.js";

const HOLD_COLUMNS = "id, tenant_id, units, status, captured_units, expires_at, created_at, settled_at, released_units, allotment";

export const GetHoldInput = z.object({ hold_id: HoldId });
export type GetHoldInput = z.input<typeof GetHoldInput>;

export async function getHold({ ctx, input }: { ctx: LedgerContext; input: GetHoldInput }): Promise<HoldView> {
  const { hold_id } = parseInput(GetHoldInput, input);
  const [row] = await ctx.prisma.$queryRawUnsafe<HoldRow[]>(`SELECT ${HOLD_COLUMNS} FROM holds WHERE id = $1`, hold_id);
  if (!row) throw new AppError("not_found", "No such hold.");
  return toHoldView(row);
}

export const MAX_HOLDS_PER_READ = 1000;
export const GetHoldsInput = z.object({ hold_ids: z.array(HoldId).min(1).max(MAX_HOLDS_PER_READ) });
export type GetHoldsInput = z.input<typeof GetHoldsInput>;

/**
 * Many holds in one statement (the reconciler checks a window of settled
 * requests at once): those that exist, in no defined order.
 */
export async function getHolds({ ctx, input }: { ctx: LedgerContext; input: GetHoldsInput }): Promise<HoldView[]> {
  const { hold_ids } = parseInput(GetHoldsInput, input);
  const rows = await ctx.prisma.$queryRawUnsafe<HoldRow[]>(`SELECT ${HOLD_COLUMNS} FROM holds WHERE id = ANY($1::text[])`, hold_ids);
  return rows.map(toHoldView);
}

export const GetTransfersInput = z.object({ operation_ids: z.array(OperationId).min(1).max(MAX_HOLDS_PER_READ) });
export type GetTransfersInput = z.input<typeof GetTransfersInput>;

/** The transfers of these operation ids, in one statement (the index on operation_id): those that exist. */
export async function getTransfers({ ctx, input }: { ctx: LedgerContext; input: GetTransfersInput }): Promise<Transfer[]> {
  const { operation_ids } = parseInput(GetTransfersInput, input);
  const rows = await ctx.prisma.$queryRawUnsafe<TransferRow[]>(
    "SELECT id, operation_id, kind, tenant_id, units, hold_id FROM transfers WHERE operation_id = ANY($1::text[])",
    operation_ids,
  );
  return rows.map(toTransfer);
}
