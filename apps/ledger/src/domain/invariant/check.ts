import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { TenantBalance } from "../accounts.js";
import type { LedgerContext } from "../context.js";
import { TenantId } from "../schemas.js";

/**
 * One tenant, or every tenant and the whole journal when asked for explicitly
 * (`all_tenants`: the operator's audit). An empty tenant id alone is refused: it
 * never means "every tenant" (issue 37, as ListUsage in docs/decisions/0183).
 */
export const CheckInvariantInput = z
  .object({
    tenant_id: z.union([z.literal(""), TenantId]).default(""),
    all_tenants: z.boolean().default(false),
  })
  .refine((q) => q.all_tenants || q.tenant_id !== "", {
    path: ["tenant_id"],
    message: "is required (all_tenants asks for the operator's check of every tenant)",
  })
  .refine((q) => !(q.all_tenants && q.tenant_id !== ""), { path: ["all_tenants"], message: "cannot be combined with a tenant_id" });
export type CheckInvariantInput = z.input<typeof CheckInvariantInput>;

/** A tenant's running balances (`available` and `held`: the accounts row), and what its journal, holds and transfers sum to. */
export type TenantInvariant = TenantBalance & {
  /** Sum of credit transfers. */
  credits: bigint;
  /** Sum of captured_units of captured holds, plus the posts of allotments. */
  captured: bigint;
  /** The same balances summed from the journal. */
  journalAvailable: bigint;
  journalHeld: bigint;
  /** Sum of the legs on the system accounts for this tenant's transfers. */
  journalFunding: bigint;
  journalRevenue: bigint;
  /** Sum of the units of open holds (of an allotment: what its posts and releases left). */
  openHolds: bigint;
  /** Allotments whose running totals differ from their transfers, exceed their units, or whose closing disagrees with their void. */
  badAllotments: bigint;
  ok: boolean;
};

export type InvariantReport = {
  ok: boolean;
  tenants: TenantInvariant[];
  /** Sum of the checked entries: 0 when the journal balances. */
  journalSum: bigint;
  /** Transfers whose legs do not sum to zero, or that have fewer than two. */
  unbalancedTransfers: bigint;
};

type Row = {
  journal_sum: bigint;
  unbalanced: bigint;
  tenant_id: string | null;
  credits: bigint;
  captured: bigint;
  available: bigint;
  held: bigint;
  j_available: bigint;
  j_held: bigint;
  j_funding: bigint;
  j_revenue: bigint;
  open_holds: bigint;
  credits_posted: bigint;
  debits_posted: bigint;
  debits_pending: bigint;
  bad_allotments: bigint;
};

/**
 * Reconciles independent records per tenant: the running balances (available and
 * held, and the pending/posted debits and credits), the journal's legs, the holds,
 * and the credit transfers (legs and holds are views over the transfers since
 * decision 0160; the balances are kept apart from them, batch by batch). One statement, so one
 * snapshot: concurrent movements never show up half done.
 */
const CHECK_SQL = `
WITH scope AS (
  SELECT id, tenant_id, kind, units, hold_id FROM transfers WHERE $1 = '' OR tenant_id = $1
),
-- For one tenant the legs are read for its transfers alone: entries numbers each
-- transfer's legs with a window function, so a join cannot reach into the view, but a
-- condition on its partition column (transfer_id) can (issue 36: 5.9 s at 1.1 million
-- transfers of other tenants, now in proportion to the tenant's own).
legs AS (
  SELECT s.tenant_id, e.transfer_id, e.account, e.units FROM scope s JOIN entries e ON e.transfer_id = s.id
  WHERE $1 = '' OR e.transfer_id = ANY (ARRAY(SELECT id FROM scope))
),
per_transfer AS (
  SELECT s.id, s.kind, s.units, coalesce(sum(l.units), 0) AS total, count(l.units) AS n
  FROM scope s LEFT JOIN legs l ON l.transfer_id = s.id GROUP BY s.id, s.kind, s.units
),
totals AS (
  SELECT (SELECT coalesce(sum(units), 0) FROM legs)::bigint AS journal_sum,
         -- (The void of an allotment its posts and releases used up moves nothing: no legs.)
         (SELECT count(*) FROM per_transfer WHERE total <> 0 OR (n < 2 AND NOT (kind = 'void' AND units = 0)))::bigint AS unbalanced
),
tenants AS (
  SELECT tenant_id FROM accounts WHERE $1 = '' OR tenant_id = $1
  UNION SELECT tenant_id FROM scope
  UNION SELECT tenant_id FROM holds WHERE $1 = '' OR tenant_id = $1
),
journal AS (
  SELECT tenant_id,
         coalesce(sum(units) FILTER (WHERE account = 'available'), 0) AS j_available,
         coalesce(sum(units) FILTER (WHERE account = 'held'), 0) AS j_held,
         coalesce(sum(units) FILTER (WHERE account = 'funding'), 0) AS j_funding,
         coalesce(sum(units) FILTER (WHERE account = 'revenue'), 0) AS j_revenue
  FROM legs GROUP BY tenant_id
),
credits AS (
  SELECT tenant_id, sum(units) FILTER (WHERE kind = 'credit') AS credits,
         sum(units) FILTER (WHERE kind IN ('capture', 'post')) AS captured
  FROM scope GROUP BY tenant_id
),
-- The posts and releases of each allotment, from its transfers.
moves AS (
  SELECT hold_id, coalesce(sum(units) FILTER (WHERE kind = 'post'), 0) AS posted, coalesce(sum(units) FILTER (WHERE kind = 'release'), 0) AS released
  FROM scope WHERE kind IN ('post', 'release') GROUP BY hold_id
),
holds_by_tenant AS (
  SELECT h.tenant_id,
         coalesce(sum(h.units - coalesce(m.posted, 0) - coalesce(m.released, 0)) FILTER (WHERE h.status = 'open'), 0) AS open_holds
  FROM holds h LEFT JOIN moves m ON m.hold_id = h.id
  WHERE $1 = '' OR h.tenant_id = $1 GROUP BY h.tenant_id
),
allotments_by_tenant AS (
  SELECT al.tenant_id,
         count(*) FILTER (WHERE al.posted <> coalesce(m.posted, 0) OR al.released <> coalesce(m.released, 0)
           OR al.posted + al.released > al.units OR h.id IS NULL OR h.units <> al.units OR h.tenant_id <> al.tenant_id
           OR (al.closed_at IS NULL) <> (h.status = 'open')) AS bad
  FROM allotments al LEFT JOIN moves m ON m.hold_id = al.hold_id LEFT JOIN holds h ON h.id = al.hold_id
  WHERE $1 = '' OR al.tenant_id = $1 GROUP BY al.tenant_id
)
SELECT totals.journal_sum, totals.unbalanced, t.tenant_id,
       coalesce(c.credits, 0)::bigint AS credits, coalesce(c.captured, 0)::bigint AS captured,
       coalesce(a.available, 0)::bigint AS available, coalesce(a.held, 0)::bigint AS held,
       coalesce(j.j_available, 0)::bigint AS j_available, coalesce(j.j_held, 0)::bigint AS j_held,
       coalesce(j.j_funding, 0)::bigint AS j_funding, coalesce(j.j_revenue, 0)::bigint AS j_revenue,
       coalesce(h.open_holds, 0)::bigint AS open_holds,
       coalesce(a.credits_posted, 0)::bigint AS credits_posted, coalesce(a.debits_posted, 0)::bigint AS debits_posted,
       coalesce(a.debits_pending, 0)::bigint AS debits_pending,
       coalesce(al.bad, 0)::bigint AS bad_allotments
FROM totals
LEFT JOIN tenants t ON true
LEFT JOIN accounts a ON a.tenant_id = t.tenant_id
LEFT JOIN journal j ON j.tenant_id = t.tenant_id
LEFT JOIN credits c ON c.tenant_id = t.tenant_id
LEFT JOIN holds_by_tenant h ON h.tenant_id = t.tenant_id
LEFT JOIN allotments_by_tenant al ON al.tenant_id = t.tenant_id
ORDER BY t.tenant_id`;

/**
 * Per tenant: credits − captured (captures and posts) = available + held; the
 * running balances equal the journal's; held equals the open holds (an allotment
 * counting what its posts and releases left); each allotment's running totals equal
 * its transfers and stay within its units; funding and revenue legs
 * equal the credits and captures; nothing negative. Globally: every transfer
 * balances and the journal sums to zero.
 */
export async function checkInvariant({ ctx, input }: { ctx: LedgerContext; input: CheckInvariantInput }): Promise<InvariantReport> {
  const { tenant_id, all_tenants } = parseInput(CheckInvariantInput, input);
  // The statement reads '' as every tenant; only all_tenants gets there.
  const rows = await ctx.prisma.$queryRawUnsafe<Row[]>(CHECK_SQL, all_tenants ? "" : tenant_id);
  const first = rows[0];
  const journalSum = first?.journal_sum ?? 0n;
  const unbalancedTransfers = first?.unbalanced ?? 0n;
  const tenants = rows
    .filter((r) => r.tenant_id !== null)
    .map(
      (r): TenantInvariant => ({
        tenantId: r.tenant_id!,
        credits: r.credits,
        captured: r.captured,
        available: r.available,
        held: r.held,
        journalAvailable: r.j_available,
        journalHeld: r.j_held,
        journalFunding: r.j_funding,
        journalRevenue: r.j_revenue,
        openHolds: r.open_holds,
        badAllotments: r.bad_allotments,
        ok:
          r.credits - r.captured === r.available + r.held &&
          r.available === r.j_available &&
          r.held === r.j_held &&
          r.held === r.open_holds &&
          // The account's pending/posted balances (docs/decisions/0160) agree with the transfers.
          r.credits_posted === r.credits &&
          r.debits_posted === r.captured &&
          r.debits_pending === r.open_holds &&
          -r.j_funding === r.credits &&
          r.j_revenue === r.captured &&
          r.bad_allotments === 0n &&
          r.available >= 0n &&
          r.held >= 0n,
      }),
    );
  return { ok: journalSum === 0n && unbalancedTransfers === 0n && tenants.every((t) => t.ok), tenants, journalSum, unbalancedTransfers };
}
