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
