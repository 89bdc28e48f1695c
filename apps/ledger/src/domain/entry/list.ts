import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { LedgerContext } from "../../db.js";
import type { AccountName, Leg, TenantBalance } from "../accounts.js";
import type { TransferKind } from "../accounts.js";
import { TenantId } from "../schemas.js";

export const ListEntriesInput = z.object({
  tenant_id: TenantId,
  /** 1..200; 0 (the proto default) means 50. */
  limit: z.number().int().min(0).max(200).default(0),
  cursor: z.string().max(64).default(""),
});
export type ListEntriesInput = z.input<typeof ListEntriesInput>;

export type LedgerEntry = {
  entryId: string;
  operationId: string;
  kind: TransferKind;
  units: bigint;
  holdId: string | null;
  reason: string;
  createdAt: Date;
  balanceAfter: TenantBalance;
  legs: Leg[];
};

export type ListEntriesResult = { entries: LedgerEntry[]; nextCursor: string };

const DEFAULT_LIMIT = 50;

/** The cursor is the position (transfers.seq) of the last entry returned, opaque to callers. */
function encodeCursor(seq: bigint): string {
  return Buffer.from(`seq:${seq}`).toString("base64url");
}

function decodeCursor(cursor: string): bigint | null {
  if (cursor === "") return null;
  const match = /^seq:(\d{1,19})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) throw new AppError("invalid_request", "cursor is not one this service returned");
  return BigInt(match[1]!);
}

type Row = {
  id: string;
  seq: bigint;
  operation_id: string;
  kind: TransferKind;
  units: bigint;
  hold_id: string | null;
  reason: string;
  created_at: Date;
  available_after: bigint;
  held_after: bigint;
  legs: { account: AccountName; units: string }[];
};

/** A tenant's movements, newest first, each with its journal legs. */
export async function listEntries({ ctx, input }: { ctx: LedgerContext; input: ListEntriesInput }): Promise<ListEntriesResult> {
  const req = parseInput(ListEntriesInput, input);
  const limit = req.limit === 0 ? DEFAULT_LIMIT : req.limit;
  const before = decodeCursor(req.cursor);
  const rows = await ctx.prisma.$queryRawUnsafe<Row[]>(
    `WITH page AS (
       SELECT id, seq, operation_id, kind, units, hold_id, reason, created_at, available_after, held_after
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
      entryId: r.id,
      operationId: r.operation_id,
      kind: r.kind,
      units: r.units,
      holdId: r.hold_id,
      reason: r.reason,
      createdAt: r.created_at,
      balanceAfter: { tenantId: req.tenant_id, available: r.available_after, held: r.held_after },
      legs: (r.legs ?? []).map((l) => ({ account: l.account, units: BigInt(l.units) })),
    })),
    nextCursor: rows.length > limit && last ? encodeCursor(last.seq) : "",
  };
}
