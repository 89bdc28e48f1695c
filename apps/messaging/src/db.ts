import { poolAdapter } from "@gateway/db-kit";
import type { EventData, EventType } from "@gateway/events";
import type { EmitOptions } from "@gateway/events-runtime";
import { PrismaClient, type Prisma } from "./generated/prisma/client.js";

export type Tx = Prisma.TransactionClient;

/**
 * `emit` of the messaging service: an event of a feed kind also writes the feed's rows in
 * the same transaction (docs/decisions/0225), from `view`, the resource after the change
 * (the feed row's `data`; never published: the event itself carries ids).
 */
export type HubEmit = <T extends EventType>(type: T, data: EventData<T>, options?: EmitOptions & { view?: Record<string, unknown> }) => Promise<string>;

/** The service's one transaction helper (`createTransact` with the feed's projection). */
export type HubTransact = <R>(fn: (tx: Tx, emit: HubEmit) => Promise<R>) => Promise<R>;

export type MessagingContext = {
  prisma: PrismaClient;
  transact: HubTransact;
};

/** The service's Prisma client, on the pool the runtime opened (shared with its plain-SQL paths). */
export function createPrisma(pool: Parameters<typeof poolAdapter>[0]): PrismaClient {
  return new PrismaClient({ adapter: poolAdapter(pool) });
}
