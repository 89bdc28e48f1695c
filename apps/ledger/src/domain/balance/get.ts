import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import type { TenantBalance } from "../accounts.js";
import { TenantId } from "../schemas.js";

export const GetBalanceInput = z.object({ tenant_id: TenantId });
export type GetBalanceInput = z.input<typeof GetBalanceInput>;

/**
 * The balance as customers and operators see it (CONTRACT.md section 4): what an
 * open allotment holds but its caller has not promised to a call counts as available.
 * Per open allotment, left = units − posted − released and in use =
 * clamp(claimed − posted, 0, left); the view moves left − in use from held to
 * available, so credits − captured − posted = available + reserved still holds.
 * One statement: the account row and the tenant's open allotments (partial index).
 */
const BALANCE_SQL = `
SELECT a.available, a.held,
       coalesce((
         SELECT sum(x.left_units - least(greatest(x.claimed - x.posted, 0), x.left_units))
         FROM (SELECT al.units - al.posted - al.released AS left_units, al.claimed, al.posted
               FROM allotments al WHERE al.tenant_id = a.tenant_id AND al.closed_at IS NULL) x
       ), 0)::bigint AS unclaimed
FROM accounts a WHERE a.tenant_id = $1`;

/** A tenant without an account yet has zero balances. */
export async function getBalance({ ctx, input }: { ctx: LedgerContext; input: GetBalanceInput }): Promise<TenantBalance> {
  const { tenant_id } = parseInput(GetBalanceInput, input);
  const rows = await ctx.prisma.$queryRawUnsafe<{ available: bigint; held: bigint; unclaimed: bigint }[]>(BALANCE_SQL, tenant_id);
  const row = rows[0];
  if (!row) return { tenantId: tenant_id, available: 0n, held: 0n };
  return { tenantId: tenant_id, available: row.available + row.unclaimed, held: row.held - row.unclaimed };
}
