import type { Transact } from "@gateway/events-runtime";
import type { Logger } from "@gateway/logger";
import type { PrismaClient, Prisma } from "../generated/prisma/client.js";
import type { BlobStore } from "../storage/store.js";

export type Tx = Prisma.TransactionClient;

/** Limits the verbs enforce (from the environment). */
export type FilesLimits = {
  maxBytes: number;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
  /** A tenant's storage limits when no operator set its own (TENANT_STORAGE_BYTES_QUOTA, TENANT_FILES_QUOTA). */
  tenantBytesQuota: number;
  tenantFilesQuota: number;
};

/** What the domain verbs work with: the database, the outbox, the blob store, the limits. */
export type FilesContext = {
  prisma: PrismaClient;
  transact: Transact<Tx>;
  store: BlobStore;
  limits: FilesLimits;
  logger: Logger;
};
