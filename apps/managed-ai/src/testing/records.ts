import type { Priced } from "../domain/invocation/plan.js";
import type { RecordToOpen } from "../storage/usage-records.js";

let n = 0;

/**
 * A usage record as a request opens it (`UsageRecordWriter.open`): id `req_rec_<n>`
 * unless given, tenant `ten_rec`, 123 units reserved for an hour, no idempotency key.
 */
export function recordToOpen(overrides: Partial<RecordToOpen> = {}): RecordToOpen {
  return {
    id: `req_rec_${++n}`,
    tenantId: "ten_rec",
    apiKeyId: "key_rec",
    serviceAlias: "chat",
    modelAlias: "small",
    priceId: "price_1",
    upstreamId: "up_1",
    discountBps: 0,
    stream: false,
    inputTokensBound: 10,
    outputTokensCap: 20,
    reservedUnits: 123n,
    holdExpiresAt: new Date(Date.now() + 60_000),
    idempotencyKey: null,
    ...overrides,
  };
}

/**
 * A priced plan as the invocation makes one for `chat`/`small`: no discount, 10 input tokens
 * bound, 10 output tokens cap, and 1,000,000 units per Mtok in and out, so the cost is the
 * token count. Price and upstream `price_1` and `up_1` unless given.
 */
export const planFor = (tenantId: string, reservedUnits: bigint, ids: { priceId?: string; upstreamId?: string } = {}): Priced =>
  ({
    mode: "managed",
    tenantId,
    serviceAlias: "chat",
    modelAlias: "small",
    priceId: ids.priceId ?? "price_1",
    upstream: { id: ids.upstreamId ?? "up_1" },
    discountBps: 0,
    inputTokensBound: 10n,
    outputTokensCap: 10,
    reservedUnits,
    price: { inputUnitsPerMtok: 1_000_000n, outputUnitsPerMtok: 1_000_000n },
  }) as unknown as Priced;
