import type { Transact } from "@gateway/events";
import type { Logger } from "@gateway/logger";
import type { PrismaClient, Prisma } from "../generated/prisma/client.js";
import type { BlobStore } from "../storage/store.js";

export type Tx = Prisma.TransactionClient;

/** Limits the verbs enforce (from the environment). */
export type FilesLimits = {
  maxBytes: number;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
};

/** What the domain verbs work with: the database, the outbox, the blob store, the limits. */
export type FilesContext = {
  prisma: PrismaClient;
  transact: Transact<Tx>;
  store: BlobStore;
  limits: FilesLimits;
  logger: Logger;
};
