import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../../db.js";
import type { TenantBalance } from "../accounts.js";
import { TenantId } from "../schemas.js";

export const GetBalanceInput = z.object({ tenant_id: TenantId });
export type GetBalanceInput = z.input<typeof GetBalanceInput>;

/** A tenant without an account yet has zero balances. */
export async function getBalance({ ctx, input }: { ctx: LedgerContext; input: GetBalanceInput }): Promise<TenantBalance> {
  const { tenant_id } = parseInput(GetBalanceInput, input);
  const rows = await ctx.prisma.$queryRawUnsafe<{ available: bigint; held: bigint }[]>(
    "SELECT available, held FROM accounts WHERE tenant_id = $1",
    tenant_id,
  );
  return { tenantId: tenant_id, available: rows[0]?.available ?? 0n, held: rows[0]?.held ?? 0n };
}
