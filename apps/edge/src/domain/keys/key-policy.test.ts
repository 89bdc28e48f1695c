import { describe, expect, it } from "vitest";
import { localDenial } from "./authenticate-key.js";
import { parseCidrs } from "./client-ip.js";
import { generateKey, hashKey, looksLikeKey } from "./key-format.js";
import type { KeyRecord } from "./key-store.js";

const record = (over: Partial<KeyRecord> = {}): KeyRecord => ({
  id: "key_1",
  version: 1,
  tenantId: "ten_1",
  name: "k",
  prefix: "gw_x",
  scopes: new Set(["jobs:read"]),
  serviceAliases: null,
  allowedIps: null,
  dailyQuota: null,
  rateLimitPerMinute: null,
  concurrencyLimit: null,
  expiresAt: null,
  expired: false,
  revoked: false,
  ...over,
});

describe("localDenial", () => {
  it("applies address, then scope, then service alias", () => {
    const key = record({ allowedIps: parseCidrs(["10.0.0.0/8"]), scopes: new Set(), serviceAliases: new Set(["ai-model:a"]) });
    expect(localDenial(key, { scope: "ai:invoke", service: { type: "ai-model", alias: "b" } }, "192.0.2.1")).toBe("ip_not_allowed");
    expect(localDenial(key, { scope: "ai:invoke", service: { type: "ai-model", alias: "b" } }, "10.0.0.1")).toBe("scope_missing");
    const scoped = record({ scopes: new Set(["ai:invoke"]), serviceAliases: new Set(["ai-model:a"]) });
    expect(localDenial(scoped, { scope: "ai:invoke", service: { type: "ai-model", alias: "b" } }, "10.0.0.1")).toBe("service_alias_not_allowed");
    expect(localDenial(scoped, { scope: "ai:invoke", service: { type: "ai-model", alias: "a" } }, "10.0.0.1")).toBeNull();
  });

  it("lets '*' cover every scope, no scope requirement pass any key, and unrestricted aliases pass any alias", () => {
    expect(localDenial(record({ scopes: new Set(["*"]) }), { scope: "tron:lease" }, "1.2.3.4")).toBeNull();
    expect(localDenial(record({ scopes: new Set() }), {}, "1.2.3.4")).toBeNull();
    expect(localDenial(record({ scopes: new Set() }), { scope: "jobs:read" }, "1.2.3.4")).toBe("scope_missing");
    expect(localDenial(record({ scopes: new Set(["ai:invoke"]) }), { scope: "ai:invoke", service: { type: "ai-model", alias: "any" } }, "1.2.3.4")).toBeNull();
  });

  it("does not let one service type's alias stand for another's", () => {
    const key = record({ scopes: new Set(["*"]), serviceAliases: new Set(["webhook-push:a"]) });
    expect(localDenial(key, { service: { type: "ai-model", alias: "a" } }, "1.2.3.4")).toBe("service_alias_not_allowed");
  });
});

describe("key format", () => {
  it("generates distinct keys whose plaintext starts with the prefix and whose hash is SHA-256", () => {
    const a = generateKey();
    const b = generateKey();
    expect(a.plaintext).not.toBe(b.plaintext);
    expect(a.plaintext.startsWith(`${a.prefix}_`)).toBe(true);
    expect(looksLikeKey(a.plaintext)).toBe(true);
    expect(a.hash).toBe(hashKey(a.plaintext));
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(looksLikeKey("gw_short_x")).toBe(false);
  });
});
