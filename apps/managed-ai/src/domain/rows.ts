/*
 * The rows managed-ai's domain reads, as the domain names them (docs/decisions/0290,
 * addendum of issue 39). Plain types of the domain's own: storage/ reads them from
 * the tables and answers them as they are, one field per column, camelCase
 * (`tenant_id` is `tenantId`); a column the domain never reads is left out. Money
 * and counters are bigint, times Date.
 */

/** An operator's provider account (table `upstreams`): where managed models' calls go, with the sealed API key. */
export type Upstream = {
  id: string;
  /** openai (any OpenAI-compatible API). */
  provider: string;
  baseUrl: string;
  enabled: boolean;
  /** The API key sealed with `apiKeyKeyId` (both or neither, a CHECK constraint). */
  apiKeyCiphertext: Uint8Array<ArrayBuffer> | null;
  apiKeyKeyId: string | null;
  /** 1 on create, +1 on every write (optimistic concurrency). */
  version: number;
  createdAt: Date;
  updatedAt: Date;
};

/** A managed model (table `models`): an alias customers call, the upstream and its model name. */
export type Model = {
  alias: string;
  upstreamId: string;
  upstreamModel: string;
  enabled: boolean;
  maxOutputTokens: number;
  /** Null: the model refuses image parts. */
  maxTokensPerImage: number | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
};

/** One immutable price version of a model (table `price_versions`), units of USD 0.0001 per million tokens. */
export type PriceVersion = {
  id: string;
  modelAlias: string;
  version: number;
  inputUnitsPerMtok: bigint;
  outputUnitsPerMtok: bigint;
  createdBy: string;
  createdAt: Date;
};

/** A model with its newest price version (none while no price was published). */
export type ModelWithPrice = Model & { prices: PriceVersion[] };

/** A tenant's discount on a model (table `offers`): one per (tenant, model). */
export type Offer = {
  id: string;
  tenantId: string;
  modelAlias: string;
  discountBps: number;
  expiresAt: Date | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
};

/** A model as planning needs it: its upstream, its price versions (newest first) and the tenant's offer. */
export type PlannedModel = Model & { upstream: Upstream; prices: PriceVersion[]; offers: Offer[] };

/** A tenant's ai-model instance (table `service_instances`). */
export type ServiceInstance = {
  id: string;
  tenantId: string;
  /** ai-model */
  serviceId: string;
  alias: string;
  /** active | disabled */
  status: string;
  /** managed | byok */
  mode: string;
  /** The stored config (JSON); read it with `configOf` (domain/instances/view.ts). */
  config: unknown;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  /** A byok instance's inline key, sealed (the instance id as associated data); or none. */
  apiKeyCiphertext: Uint8Array<ArrayBuffer> | null;
  apiKeyKeyId: string | null;
  /** A byok instance's connected account (instead of an inline key); or none. */
  connectedAccountId: string | null;
};

/** A tenant's stored credential (table `connected_accounts`), sealed (the account id as associated data). */
export type ConnectedAccount = {
  id: string;
  tenantId: string;
  provider: string;
  name: string;
  secretCiphertext: Uint8Array<ArrayBuffer>;
  secretKeyId: string;
  createdAt: Date;
};

/** A connected account as the service answers it: never the secret nor its ciphertext. */
export type ConnectedAccountView = Pick<ConnectedAccount, "id" | "tenantId" | "provider" | "name" | "createdAt">;

/** A metered (or byok) request's record (table `usage_records`). */
export type UsageRecord = {
  id: string;
  tenantId: string;
  apiKeyId: string | null;
  serviceAlias: string;
  modelAlias: string;
  priceId: string;
  upstreamId: string;
  discountBps: number;
  /** managed | byok */
  mode: string;
  /** reserved | completed | failed | review */
  status: string;
  stream: boolean;
  /** chat_completions | messages | embeddings; null before it was recorded. */
  api: string | null;
  inputTokensBound: number;
  outputTokensCap: number;
  reservedUnits: bigint;
  finalUnits: bigint | null;
  usageJson: string | null;
  errorCode: string | null;
  holdId: string | null;
  holdExpiresAt: Date;
  settledAt: Date | null;
  refundedUnits: bigint | null;
  releasedBy: string | null;
  releaseReason: string | null;
  /** The allotment the reservation was claimed from (docs/decisions/0028); null: a hold of its own. */
  allotmentId: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Its position in the table: the order lists page by (docs/decisions/0212). */
  seq: bigint;
};

/** A tenant's allotment (table `allotments`, docs/decisions/0028), as the closing and the carve read it. */
export type Allotment = {
  id: string;
  tenantId: string;
  /** opening | open | closing | closed */
  state: string;
  /** The ledger's hold (null while opening). */
  holdId: string | null;
  units: bigint;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
  nextCheckAt: Date;
};
