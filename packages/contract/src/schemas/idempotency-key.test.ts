import { describe, expect, it } from "vitest";
import { IdempotencyKey, idempotencyKeyHeader, OptionalIdempotencyKey } from "./idempotency-key.js";

describe("IdempotencyKey", () => {
  it("takes 1 to 128 of A-Z a-z 0-9 . _ : -", () => {
    for (const good of ["k", "lease-once:1", "a.b_c:d-e", "x".repeat(128)]) expect(IdempotencyKey.safeParse(good).success, good).toBe(true);
  });

  it("refuses empty, 129 characters, spaces and other characters", () => {
    for (const bad of ["", "x".repeat(129), "has space", "bad key!", "a/b", "a@b"]) expect(IdempotencyKey.safeParse(bad).success, bad).toBe(false);
  });
});

describe("OptionalIdempotencyKey (gRPC: '' is no key)", () => {
  it("passes '' and absent as '', and valid keys as they are", () => {
    expect(OptionalIdempotencyKey.parse("")).toBe("");
    expect(OptionalIdempotencyKey.parse(undefined)).toBe("");
    expect(OptionalIdempotencyKey.parse("k:1")).toBe("k:1");
  });

  it("refuses what the header would refuse", () => {
    const result = OptionalIdempotencyKey.safeParse("x".repeat(129));
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe("must be 1-128 of A-Z a-z 0-9 . _ : -");
    expect(OptionalIdempotencyKey.safeParse("has space").success).toBe(false);
  });
});

describe("idempotencyKeyHeader", () => {
  it("declares the header optional, under its canonical name", () => {
    const headers = idempotencyKeyHeader("a repeat is answered once");
    expect(headers.parse({})).toEqual({});
    expect(headers.parse({ "Idempotency-Key": "k" })).toEqual({ "Idempotency-Key": "k" });
    expect(headers.safeParse({ "Idempotency-Key": "" }).success).toBe(false);
    expect(headers.shape["Idempotency-Key"].description).toBe("a repeat is answered once");
  });
});
