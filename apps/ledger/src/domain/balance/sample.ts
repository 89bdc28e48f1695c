import type pg from "pg";

/**
 * Every tenant's available balance as the balance views show it (`getBalance`: the
 * account's available plus what its open allotments hold unclaimed), in one
 * statement; or, with `perTenant` false, their sum.
 */
const PER_TENANT = `
SELECT a.tenant_id,
       (a.available + coalesce((
         SELECT sum(x.left_units - least(greatest(x.claimed - x.posted, 0), x.left_units))
         FROM (SELECT al.units - al.posted - al.released AS left_units, al.claimed, al.posted
               FROM allotments al WHERE al.tenant_id = a.tenant_id AND al.closed_at IS NULL) x
       ), 0))::text AS available
FROM accounts a`;

export async function sampleAvailable(pool: pg.Pool, perTenant: boolean): Promise<{ tenantId: string; available: bigint }[]> {
  const { rows } = await pool.query<{ tenant_id: string; available: string }>(
    perTenant ? PER_TENANT : `SELECT '' AS tenant_id, coalesce(sum(available::numeric), 0)::text AS available FROM (${PER_TENANT}) t`,
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, available: BigInt(r.available) }));
}
