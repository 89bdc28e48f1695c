import type { Tx } from "../domain/ports.js";
import { prismaTx } from "./prisma-tx.js";

/**
 * The row locks the catalog's writes take inside their transaction before they read,
 * compare and write a row (optimistic versions, one writer at a time per row). Each
 * answers whether the row exists (what the lock found).
 */
export async function lockUpstream(tx: Tx, id: string): Promise<boolean> {
  return (await prismaTx(tx).$queryRaw<unknown[]>`SELECT 1 FROM upstreams WHERE id = ${id} FOR UPDATE`).length > 0;
}

export async function lockModel(tx: Tx, alias: string): Promise<boolean> {
  return (await prismaTx(tx).$queryRaw<unknown[]>`SELECT 1 FROM models WHERE alias = ${alias} FOR UPDATE`).length > 0;
}

export async function lockOffer(tx: Tx, tenantId: string, modelAlias: string): Promise<boolean> {
  return (await prismaTx(tx).$queryRaw<unknown[]>`SELECT 1 FROM offers WHERE tenant_id = ${tenantId} AND model_alias = ${modelAlias} FOR UPDATE`).length > 0;
}

/** A tenant's ai-model instance under `alias`: its id, locked; null when there is none. */
export async function lockInstance(tx: Tx, tenantId: string, alias: string): Promise<string | null> {
  const found = await prismaTx(tx).$queryRaw<{ id: string }[]>`SELECT id FROM service_instances
    WHERE tenant_id = ${tenantId} AND service_id = 'ai-model' AND alias = ${alias} FOR UPDATE`;
  return found[0]?.id ?? null;
}

/** A tenant's connected account, locked: its provider; null when there is none. */
export async function lockConnectedAccount(tx: Tx, tenantId: string, id: string): Promise<{ provider: string } | null> {
  const rows = await prismaTx(tx).$queryRaw<
    { provider: string }[]
  >`SELECT provider FROM connected_accounts WHERE id = ${id} AND tenant_id = ${tenantId} FOR UPDATE`;
  return rows[0] ?? null;
}
