import type { Tx } from "../domain/ports.js";
import type { PrismaTx } from "../db.js";
import type { PrismaClient } from "../generated/prisma/client.js";

/*
 * The domain's transaction (`Tx`, domain/ports.ts) is a Prisma transaction, which
 * storage's statements take back here (docs/decisions/0290, addendum of issue 39).
 */

export type { PrismaTx };

/** The caller's transaction as what it is. */
export function prismaTx(tx: Tx): PrismaTx {
  return tx as unknown as PrismaTx;
}

/** Where a statement runs: the caller's transaction, or else the client (a statement of its own). */
export function on(prisma: PrismaClient, tx?: Tx): PrismaTx {
  return tx ? prismaTx(tx) : prisma;
}
