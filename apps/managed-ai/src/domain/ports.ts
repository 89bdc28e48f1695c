import type { SqlExecutor } from "@gateway/events-runtime";
import type { Reclaimed } from "@gateway/ledger-client";
import type { ledger } from "@gateway/protos";
import type { Provider } from "./invocation/provider.js";
import type {
  Allotment,
  ConnectedAccount,
  ConnectedAccountView,
  Model,
  ModelWithPrice,
  Offer,
  PlannedModel,
  PriceVersion,
  ServiceInstance,
  Upstream,
  UsageRecord,
} from "./rows.js";

/*
 * What managed-ai's domain needs from outside it (docs/decisions/0290): its ports. The
 * adapters (storage/, providers/, metrics/) implement them, wiring.ts puts them into the
 * context; a domain file reaches storage, providers and metrics only through these.
 * The rows they answer are the domain's own types (rows.ts); nothing from outside
 * domain/ is named here but packages (addendum of issue 39).
 */

declare const transaction: unique symbol;

/**
 * A transaction of the domain's (`ctx.transact`, `ctx.writeCatalog`), opaque to it: the
 * domain hands it to its ports' statements (they run in it) and its `emit` writes the
 * outbox into it. Storage made it and knows what it is (storage/prisma-tx.ts: a Prisma
 * transaction); the brand keeps anything else from passing for one.
 */
export type Tx = SqlExecutor & { readonly [transaction]: true };

/** Enough of a transaction for a raw statement (the domain's `Tx` is one). */
export type InTx = { $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number> };

/** A pool's client, as pg gives it: enough for a session lock, or a transaction with a cursor. */
export type PoolClient = { query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>; release(): void };
export type LockPool = { connect(): Promise<PoolClient> };
export type RetentionPool = LockPool;

export type { PlannedModel };

/** Instances, models, prices and offers as invocations read them (cached). */
export type CatalogReads = {
  instance(tenantId: string, alias: string): Promise<ServiceInstance | null>;
  model(alias: string, tenantId: string): Promise<PlannedModel | null>;
  account(tenantId: string, id: string): Promise<ConnectedAccount | null>;
};

/**
 * The row locks the catalog's writes take inside their transaction before they read,
 * compare and write a row (optimistic versions, one writer at a time per row). Each
 * answers whether the row exists (what the lock found).
 */
export type CatalogLocks = {
  upstream(tx: Tx, id: string): Promise<boolean>;
  model(tx: Tx, alias: string): Promise<boolean>;
  offer(tx: Tx, tenantId: string, modelAlias: string): Promise<boolean>;
  /** A tenant's ai-model instance under `alias`: its id, locked; null when there is none. */
  instance(tx: Tx, tenantId: string, alias: string): Promise<string | null>;
  /** A tenant's connected account, locked: its provider; null when there is none. */
  connectedAccount(tx: Tx, tenantId: string, id: string): Promise<{ provider: string } | null>;
};

/**
 * A usage record to open (status `reserved`) and its Idempotency-Key claim. Its
 * `request_reserved` event is the row itself (docs/decisions/0205).
 */
export type RecordToOpen = Pick<
  UsageRecord,
  | "id"
  | "tenantId"
  | "apiKeyId"
  | "serviceAlias"
  | "modelAlias"
  | "priceId"
  | "upstreamId"
  | "discountBps"
  | "stream"
  | "inputTokensBound"
  | "outputTokensCap"
  | "reservedUnits"
  | "holdExpiresAt"
> & {
  /** managed (held and charged) | byok (recorded only); absent: managed. */
  mode?: "managed" | "byok";
  /** Claimed together with the record (only with an API key); null: no claim. */
  idempotencyKey: string | null;
  /** The API the request came through (chat_completions | messages | embeddings); absent: not recorded. */
  api?: string;
};

/**
 * A record written: the allotment it claimed its reservation from (and that
 * allotment's ledger hold), or none; `ranOut` names the tenant's open allotment
 * when it had no room left for this reservation (docs/decisions/0028).
 */
export type OpenedRecord = { allotmentId: string | null; allotmentHoldId: string | null; ranOut: string | null };

/** A record's end state (only a `reserved` record changes); the row is its `request_settled` event. */
export type RecordToSettle = {
  id: string;
  status: "completed" | "failed" | "review";
  errorCode: string | null;
  holdId: string | null;
  finalUnits: bigint | null;
  usageJson: string | null;
};

/** Opens and settlements of usage records, group-committed. */
export type RecordWrites = {
  open(record: RecordToOpen): Promise<OpenedRecord | null>;
  settle(record: RecordToSettle): Promise<boolean>;
};

/** A record's next state (see `RecordRows.move`). */
export type RecordMove = { status: "completed" | "failed" | "review"; errorCode: string | null; finalUnits: bigint | null; refundedUnits: bigint | null };

/** The usage records' statements that run in a caller's transaction. */
export type RecordRows = {
  /** Moves a record on if it is still as it was read (status, error code, `updated_at`): true when it changed. */
  move(tx: InTx, row: { id: string; status: string; errorCode: string | null; updatedAt: Date }, holdId: string | null, next: RecordMove): Promise<boolean>;
  /** A completed record whose capture failed goes to review (`settlement_failed`, its usage kept, nothing charged yet). */
  toSettlementFailed(tx: InTx, id: string): Promise<boolean>;
  /** A record whose hold the ledger refused leaves (its events kept, docs/decisions/0205): true when it was there. */
  deleteRefused(tx: InTx, r: { id: string; tenantId: string; apiKeyId: string | null; idempotencyKey: string | null }): Promise<boolean>;
  /** Counts an allotment's claims again from its records (the row locked first). */
  recount(tx: InTx, allotmentId: string): Promise<void>;
};

/** A budget's counter for one period: whose (a key or an instance), its limit now. */
export type BudgetCounterKey = { scope: "key" | "instance"; id: string; limitUnits: bigint; period: "day" | "month"; periodStart: Date };

/** One request's reservation against its budgets' counters. */
export type BudgetReservation = { requestId: string; tenantId: string; counters: BudgetCounterKey[]; units: bigint; source: "ai" | "push" };

/** Why a request was refused: the first of its counters without room, as it stood. */
export type BudgetRefusal = { index: number; spentUnits: bigint; reservedUnits: bigint };

export type SettledCounter = {
  /** The newest request settled on the counter: the one whose charge crossed a threshold, if any did. */
  request_id: string;
  tenant_id: string;
  scope: "key" | "instance";
  scope_id: string;
  period: "day" | "month";
  period_start: Date;
  limit_units: string;
  spent_units: string;
  threshold_marked: boolean;
  reached_marked: boolean;
};

/** Spend budgets' rows (docs/decisions/0024): counters per budget and period, and a claim per request and budget. */
export type BudgetRows = {
  /** Reserves a request against its counters (group-committed); the refusal, or null when it fits. */
  reserve(reservation: BudgetReservation): Promise<BudgetRefusal | null>;
  /** What counters hold now, in the order asked (absent counters: nothing spent yet). */
  readCounters(keys: { scope: string; id: string; periodStart: Date }[]): Promise<{ spentUnits: bigint; reservedUnits: bigint }[]>;
  settleRecordClaims(requestIds: string[], orphans: boolean, orphanAfterSeconds: number): Promise<SettledCounter[]>;
  settlePushClaims(requestId: string, finalUnits: bigint): Promise<SettledCounter[]>;
  /** Requests with AI claims still open, oldest first (the sweep's candidates). */
  openClaimRequests(limit: number): Promise<string[]>;
  /** Marks a counter's crossing of 80 % (threshold) or 100 % (reached) once per period; true for the one writer that set it. */
  markCrossing(tx: InTx, crossing: "threshold" | "reached", key: { scope: string; id: string; periodStart: Date }): Promise<boolean>;
};

/** The reconciler's own statements: whether anything may become due, when a record comes back, and the lock that picks one replica. */
export type ReconcilerRows = {
  workPending(): Promise<boolean>;
  candidateIds(status: "reserved" | "review", olderThan: Date | null, now: Date, limit: number): Promise<string[]>;
  capturesAfter(cp: { settledAt: Date; recordId: string }, settledBefore: Date, limit: number): Promise<string[]>;
  recheckAt(recordId: string, seconds: number): Promise<void>;
  advanceCapturesCheckpoint(through: { settledAt: Date; id: string }): Promise<void>;
  /** Runs `fn` while holding a session advisory lock on one connection; null when another replica holds it. */
  exclusively<T>(pool: LockPool, fn: () => Promise<T>): Promise<T | null>;
};

/** What one month's pass did. */
export type MonthOutcome = { month: string; outcome: "exported" | "empty" | "unsettled"; tenants: number; records: number };

/** Usage retention's statements (docs/decisions/0241): which months may leave, and one month's export and removal. */
export type RetentionRows = {
  monthsBefore(pool: RetentionPool, cutoff: Date): Promise<Date[]>;
  exportAndDeleteMonth(pool: RetentionPool, month: Date, dir: string): Promise<MonthOutcome>;
};

/** The closing's statements (domain/allotments/close.ts, docs/decisions/0028). */
export type AllotmentRows = {
  /** The reservation that opens an allotment: also what the reconciler replays to find its hold. */
  reserveRequest(a: { id: string; tenantId: string; units: bigint; expiresAt: Date }): ledger.ReserveRequest;
  closeIdle(idleSeconds: number, maxAgeSeconds: number): Promise<string[]>;
  recordsInFlight(allotmentId: string): Promise<number>;
  chargesOf(allotmentId: string): Promise<{ id: string; units: bigint }[]>;
  checkAgain(allotmentId: string, delay: { baseSeconds: number } | "now"): Promise<void>;
  openingFound(allotmentId: string, holdId: string): Promise<void>;
  openingAbandoned(allotmentId: string): Promise<void>;
  markClosed(allotmentId: string): Promise<void>;
  get(allotmentId: string): Promise<Allotment | null>;
  /** Openings older than a minute that are due: their hold may be in the ledger without them knowing. */
  staleOpenings(limit: number): Promise<Allotment[]>;
  /** Closing allotments that are due, the longest waiting first. */
  dueClosings(limit: number): Promise<Allotment[]>;
};

/** A sealed API key as read for re-sealing (an upstream's, a byok instance's). */
export type SealedKeyRow = { id: string; ciphertext: Uint8Array<ArrayBuffer>; keyId: string; updatedAt: Date };

/**
 * Writes a re-sealed credential back into its row by compare-and-set (still the key id and
 * ciphertext that were read), `updated_at` kept: true when it was replaced.
 */
export type ReplaceSealed = (row: SealedKeyRow, sealed: { ciphertext: Uint8Array<ArrayBuffer>; keyId: string }) => Promise<boolean>;

/** An upstream without its credential (what operators see and events carry), as most reads take it. */
export type UpstreamRow = Omit<Upstream, "apiKeyCiphertext">;

/** What a write of an upstream sets (the key only when one was sent). */
export type UpstreamWrite = {
  provider: string;
  baseUrl: string;
  enabled: boolean;
  key?: { apiKeyCiphertext: Uint8Array<ArrayBuffer>; apiKeyKeyId: string };
};

/** The upstreams' reads and writes (storage/catalog.ts). A `tx` runs the statement in the caller's transaction. */
export type UpstreamRows = {
  /** Newest first. */
  list(limit: number): Promise<UpstreamRow[]>;
  get(tx: Tx, id: string): Promise<UpstreamRow | null>;
  /** Where a test of the upstream goes: its base URL and sealed key. */
  target(id: string): Promise<Pick<Upstream, "baseUrl" | "apiKeyCiphertext" | "apiKeyKeyId"> | null>;
  exists(tx: Tx, id: string): Promise<boolean>;
  /** Version 1; false when another writer created it first. */
  create(tx: Tx, id: string, write: UpstreamWrite): Promise<boolean>;
  /** The next version, if it is still at `version`: false when another writer moved it. */
  update(tx: Tx, id: string, version: number, write: UpstreamWrite): Promise<boolean>;
  /** Every upstream with a key, by id. */
  sealedKeys(): Promise<SealedKeyRow[]>;
  replaceKey: ReplaceSealed;
};

/** What a write of a model sets. */
export type ModelWrite = Pick<Model, "upstreamId" | "upstreamModel" | "enabled" | "maxOutputTokens" | "maxTokensPerImage">;

/** The models' reads and writes (storage/catalog.ts); `WithPrice`: with the newest price version. */
export type ModelRows = {
  /** Newest first. */
  list(limit: number): Promise<ModelWithPrice[]>;
  exists(alias: string, tx?: Tx): Promise<boolean>;
  get(tx: Tx, alias: string): Promise<Model | null>;
  withPrice(tx: Tx, alias: string): Promise<ModelWithPrice | null>;
  create(tx: Tx, alias: string, write: ModelWrite): Promise<boolean>;
  update(tx: Tx, alias: string, version: number, write: ModelWrite): Promise<boolean>;
  /** Which of `aliases` are models. */
  known(aliases: string[]): Promise<string[]>;
  /** Models with a price, newest first (at most 200): the newest price and the tenant's offers with each. */
  priced(tenantId: string): Promise<(ModelWithPrice & { offers: Offer[] })[]>;
  /** The enabled, priced models (of `aliases` when given), newest first, at most 200. */
  servable(aliases: string[] | null): Promise<{ alias: string; createdAt: Date }[]>;
};

/** A new price version. */
export type PriceWrite = Pick<PriceVersion, "id" | "modelAlias" | "version" | "inputUnitsPerMtok" | "outputUnitsPerMtok" | "createdBy">;

/** Price versions (storage/catalog.ts): immutable, numbered per model. */
export type PriceRows = {
  /** A model's versions, newest first. */
  list(modelAlias: string, limit: number): Promise<PriceVersion[]>;
  get(id: string): Promise<PriceVersion | null>;
  latest(tx: Tx, modelAlias: string): Promise<PriceVersion | null>;
  create(tx: Tx, price: PriceWrite): Promise<PriceVersion>;
};

/** Offers (storage/catalog.ts): one per (tenant, model). */
export type OfferRows = {
  /** Newest first, of one tenant and/or model when given. */
  list(filter: { tenantId: string | null; modelAlias: string | null; limit: number }): Promise<Offer[]>;
  get(tx: Tx, tenantId: string, modelAlias: string): Promise<Offer | null>;
  create(tx: Tx, offer: Pick<Offer, "id" | "tenantId" | "modelAlias" | "discountBps" | "expiresAt">): Promise<boolean>;
  /** `expiresAt` undefined: kept. */
  update(tx: Tx, id: string, version: number, write: { discountBps: number; expiresAt?: Date | null }): Promise<boolean>;
};

/** What a write of an instance sets. */
export type InstanceWrite = Pick<ServiceInstance, "status" | "mode" | "apiKeyCiphertext" | "apiKeyKeyId" | "connectedAccountId"> & { config: object };

/** Tenants' ai-model instances (storage/instances.ts). */
export type InstanceRows = {
  /** The tenant's, newest first (at most 200). */
  list(tenantId: string): Promise<ServiceInstance[]>;
  get(tenantId: string, alias: string): Promise<ServiceInstance | null>;
  create(tx: Tx, instance: Pick<ServiceInstance, "id" | "tenantId" | "alias"> & InstanceWrite): Promise<ServiceInstance>;
  /** The next version. */
  update(tx: Tx, id: string, write: InstanceWrite): Promise<ServiceInstance>;
  /** One of the tenant's instances that uses the connected account, or null. */
  usingAccount(tx: Tx, tenantId: string, accountId: string): Promise<{ serviceId: string; alias: string } | null>;
  /** Every instance with an inline key, by id. */
  sealedKeys(): Promise<SealedKeyRow[]>;
  replaceKey: ReplaceSealed;
};

/** Tenants' connected accounts (storage/connected-accounts.ts). */
export type ConnectedAccountRows = {
  /** The tenant's, newest first (at most 200), without secrets. */
  list(tenantId: string): Promise<ConnectedAccountView[]>;
  get(tenantId: string, id: string): Promise<ConnectedAccount | null>;
  /** The account's provider, or null when the tenant has no such account. */
  provider(tx: Tx, tenantId: string, id: string): Promise<string | null>;
  create(tx: Tx, account: Omit<ConnectedAccount, "createdAt">): Promise<ConnectedAccountView>;
  delete(tx: Tx, id: string): Promise<void>;
  /** Every account's sealed secret, by id. */
  sealedSecrets(): Promise<Omit<SealedKeyRow, "updatedAt">[]>;
  replaceSecret(row: Omit<SealedKeyRow, "updatedAt">, sealed: { ciphertext: Uint8Array<ArrayBuffer>; keyId: string }): Promise<boolean>;
};

/** An operator's decision written into a record (release or capture). */
export type RecordDecision = {
  status: "completed" | "failed";
  holdId: string | null;
  finalUnits: bigint;
  refundedUnits: bigint;
  errorCode: string;
  releasedBy: string;
  releaseReason: string;
  settledAt: Date;
};

/** The usage records' reads, and the operator's decision (storage/usage.ts). */
export type UsageRows = {
  get(id: string): Promise<UsageRecord | null>;
  /** The records of `ids` that exist, in no order. */
  byIds(ids: string[]): Promise<UsageRecord[]>;
  /** A record's position (`seq`), of the tenant when given; null when there is none. */
  seqOf(id: string, tenantId: string | null): Promise<bigint | null>;
  /** Newest first (by `seq`), below `before` when given. `mode` null: both modes. */
  page(q: { tenantId: string | null; mode: "managed" | "byok" | null; before: bigint | null; take: number }): Promise<UsageRecord[]>;
  /** Of `ids`, the completed records without a hold of their own (charged from an allotment). */
  completedWithoutHold(ids: string[]): Promise<UsageRecord[]>;
  /** Writes the decision if the record is still in `status`: false when it changed. */
  decide(tx: Tx, id: string, status: string, decision: RecordDecision): Promise<boolean>;
  /** The reconciler's check of settled records: how far it got (written by the migration that brought it). */
  capturesCheckpoint(): Promise<{ settledAt: Date; recordId: string } | null>;
  /** The events of the tenant's request kept with its record, as published (docs/decisions/0330); none for another's. */
  events(requestId: string, tenantId: string): Promise<RequestEventRow[]>;
};

/** An event as it was published: its id, type, payload (JSON text) and time. */
export type RequestEventRow = { id: string; type: string; dataJson: string; createdAt: Date };

/** The statements and reads the domain runs through its adapters (storage/store.ts). */
export type Store = {
  locks: CatalogLocks;
  upstreams: UpstreamRows;
  models: ModelRows;
  prices: PriceRows;
  offers: OfferRows;
  instances: InstanceRows;
  accounts: ConnectedAccountRows;
  usage: UsageRows;
  records: RecordRows;
  budgets: BudgetRows;
  reconciler: ReconcilerRows;
  retention: RetentionRows;
  allotments: AllotmentRows;
};

export type AllotmentOptions = {
  enabled: boolean;
  /** The share of the available balance an allotment takes, in percent. */
  sharePercent: number;
  /** The largest allotment. */
  maxUnits: bigint;
  /** No allotment smaller than this (nor than four times the request's reservation). */
  minUnits: bigint;
  /** How long a charge waits for others before its batch is posted. */
  lingerMs: number;
  /** How long an allotment's hold lasts in the ledger (informative: the reconciler closes it first). */
  holdTtlSeconds: number;
};

/** A charge to post: the request's own operation, drawn from its allotment's hold. */
export type Charge = { requestId: string; allotmentId: string; holdId: string; units: bigint };

/** Tenants' allotments in the ledger, and the batched posting of charges from them (docs/decisions/0028). */
export type AllotmentPool = {
  readonly options: AllotmentOptions;
  readonly enabled: boolean;
  post(charge: Charge): void;
  touch(allotmentId: string): void;
  chargesRefused(requestIds: string[]): Promise<void>;
  drain(): Promise<void>;
  reportLive(): Promise<number>;
  refill(tenantId: string, available: bigint, reservation: bigint): void;
  freeze(allotmentId: string): Promise<void>;
  reclaim(tenantId: string): Promise<Reclaimed>;
  resendReleases(): Promise<number>;
};

/** The operations metrics of AI calls (docs/decisions/0211). */
export type InvocationMetrics = {
  track<T>(run: () => Promise<T>): Promise<T>;
  planned(model: string): void;
  settled(input: { tenantId: string; model: string; chargedUnits: bigint; inputTokens: bigint; outputTokens: bigint }): void;
};

export type { Provider };
