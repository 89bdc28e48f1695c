import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { Cursor, decodeCursor, encodeCursor, listLimit } from "@gateway/contract";
import type { LedgerContext } from "../context.js";
import { toTransfer, type AccountName, type Leg, type TenantBalance, type Transfer, type TransferRow } from "../accounts.js";
import { TenantId } from "../schemas.js";

export const ListEntriesInput = z.object({
  tenant_id: TenantId,
  /** 1..200; 0 (the proto default) means 50. */
  limit: listLimit(200, 50),
  /** The `next_cursor` of the previous page (the position of its last entry); "" for the newest. */
  cursor: Cursor.default(""),
});
export type ListEntriesInput = z.input<typeof ListEntriesInput>;

export type LedgerEntry = Transfer & {
  reason: string;
  createdAt: Date;
  balanceAfter: TenantBalance;
  legs: Leg[];
};

export type ListEntriesResult = { entries: LedgerEntry[]; nextCursor: string };

type Row = TransferRow & {
  seq: bigint;
  reason: string;
  created_at: Date;
  available_after: bigint;
  held_after: bigint;
  legs: { account: AccountName; units: string }[];
};

/** A tenant's movements, newest first, each with its journal legs. */
export async function listEntries({ ctx, input }: { ctx: LedgerContext; input: ListEntriesInput }): Promise<ListEntriesResult> {
  const req = parseInput(ListEntriesInput, input);
  const limit = req.limit;
  // The cursor is the position (transfers.seq) of the last entry returned (docs/decisions/0202).
  const before = decodeCursor(req.cursor);
  const rows = await ctx.prisma.$queryRawUnsafe<Row[]>(
    `WITH page AS (
       SELECT id, seq, operation_id, kind, tenant_id, units, hold_id, reason, created_at, available_after, held_after
       FROM transfers
       WHERE tenant_id = $1 AND ($2::bigint IS NULL OR seq < $2::bigint)
       ORDER BY seq DESC
       LIMIT $3
     )
     SELECT page.*,
            (SELECT json_agg(json_build_object('account', e.account, 'units', e.units::text) ORDER BY e.leg)
             FROM entries e WHERE e.transfer_id = page.id) AS legs
     FROM page ORDER BY seq DESC`,
    req.tenant_id,
    before?.toString() ?? null,
    limit + 1,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    entries: page.map((r) => ({
      ...toTransfer(r),
      reason: r.reason,
      createdAt: r.created_at,
      balanceAfter: { tenantId: req.tenant_id, available: r.available_after, held: r.held_after },
      legs: (r.legs ?? []).map((l) => ({ account: l.account, units: BigInt(l.units) })),
    })),
    nextCursor: rows.length > limit && last ? encodeCursor(last.seq) : "",
  };
}
