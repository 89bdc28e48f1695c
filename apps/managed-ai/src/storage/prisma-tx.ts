import type { Transact } from "@gateway/events-runtime";
import type { Tx } from "../domain/ports.js";
import type { PrismaTx } from "../db.js";
import type { PrismaClient } from "../generated/prisma/client.js";

/*
 * The domain's transaction (`Tx`, opaque in domain/ports.ts) is a Prisma transaction:
 * the context's `transact` and `writeCatalog` are made here from Prisma's, and storage's
 * statements take it back (docs/decisions/0290, addendum of issue 39). Only
 * `domainTransact` and `prismaTx` cross between the two names.
 */

export type { PrismaTx };

/** The service's transaction helper as the domain gets it: its transactions are opaque `Tx`s. */
export function domainTransact(transact: Transact<PrismaTx>): Transact<Tx> {
  return transact as unknown as Transact<Tx>;
}

/** The caller's transaction as what it is (every `Tx` comes from `domainTransact`). */
export function prismaTx(tx: Tx): PrismaTx {
  return tx as unknown as PrismaTx;
}

/** Where a statement runs: the caller's transaction, or else the client (a statement of its own). */
export function on(prisma: PrismaClient, tx?: Tx): PrismaTx {
  return tx ? prismaTx(tx) : prisma;
}
