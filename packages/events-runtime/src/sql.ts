/**
 * The slice of a Prisma (transaction) client the events kit needs. The kit
 * speaks SQL to its two tables so it works with every service's generated client.
 */
export type SqlExecutor = {
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
  /**
   * Where offered (`pgTransactions`): run this statement (no parameters) in the same
   * message as the COMMIT, one round trip instead of two. Without it, run it as usual.
   */
  commitWith?(query: string): void;
  /**
   * Where offered (`pgTransactions`): run the fixed statement `query` (no parameters) as the
   * session's prepared statement `name`: parsed and planned once per connection.
   */
  $queryPrepared?<T = unknown>(name: string, query: string): PromiseLike<T>;
};

/** Runs `fn` in one database transaction (e.g. `(fn) => prisma.$transaction(fn)`). */
export type TxRunner<Tx extends SqlExecutor = SqlExecutor> = <R>(fn: (tx: Tx) => Promise<R>) => Promise<R>;

/**
 * The tables every service's schema.prisma declares, word for word
 * (checked by schema-models.test.ts).
 */
export const OUTBOX_PRISMA_MODELS = `/// Transactional outbox: events committed with the change that caused them; the relay publishes them to NATS, then deletes them.
model OutboxEvent {
  seq       BigInt   @id @default(autoincrement())
  id        String   @unique
  type      String
  payload   Json
  requestId String?  @map("request_id")
  createdAt DateTime @default(now()) @map("created_at") @db.Timestamptz(3)

  @@map("outbox_events")
}

/// Events a consumer of this service has processed, for exactly-once effects.
model ProcessedEvent {
  consumer    String
  eventId     String   @map("event_id")
  processedAt DateTime @default(now()) @map("processed_at") @db.Timestamptz(3)

  @@id([consumer, eventId])
  @@map("processed_events")
}
`;
