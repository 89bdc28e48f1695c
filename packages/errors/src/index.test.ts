import { describe, expect, it } from "vitest";
import { AppError, ERROR_CODES, HTTP_STATUS, isErrorCode, toErrorBody } from "./index.js";

describe("HTTP_STATUS", () => {
  it("gives each contract code its contract status", () => {
    // CONTRACT.md section 1 ("Errors"), as written there: the code for each status.
    const contract =
      "400 `invalid_request`, 401 `unauthorized`, 402 `insufficient_balance`, 403 `forbidden`, 404 `not_found`, 409 `conflict`, " +
      "413 `payload_too_large`, 422 `validation_failed`, 429 `rate_limited`, 500 `internal_error`, 502 `upstream_error`, 503 `unavailable`";
    const statusOf = Object.fromEntries([...contract.matchAll(/(\d{3}) `(\w+)`/g)].map(([, status, code]) => [code, Number(status)]));
    expect(Object.keys(statusOf)).toHaveLength(12);
    expect(HTTP_STATUS).toEqual(statusOf);
  });

  it("maps statuses one to one", () => {
    const statuses = ERROR_CODES.map((c) => HTTP_STATUS[c]);
    expect(new Set(statuses).size).toBe(ERROR_CODES.length);
  });
});

describe("toErrorBody", () => {
  it("renders an AppError flat, with extras and the request id", () => {
    const err = new AppError("conflict", "max_cost is below the reservation", { extra: { pricing: { cost: 0.0123 } } });
    expect(toErrorBody(err, "req_1")).toEqual({
      status: 409,
      body: { error: "conflict", message: "max_cost is below the reservation", request_id: "req_1", pricing: { cost: 0.0123 } },
    });
  });

  it("does not let extras override the contract fields", () => {
    const err = new AppError("not_found", "no such key", { extra: { error: "x", request_id: "spoof" } });
    const { body } = toErrorBody(err, "req_2");
    expect(body.error).toBe("not_found");
    expect(body.request_id).toBe("req_2");
  });

  it("hides the message of unknown errors", () => {
    const { status, body } = toErrorBody(new Error('relation "users" does not exist at /srv/app.js:10'), "req_3");
    expect(status).toBe(500);
    expect(body.error).toBe("internal_error");
    expect(body.message).not.toContain("relation");
    expect(body.request_id).toBe("req_3");
  });
});

describe("isErrorCode", () => {
  it("accepts contract codes only", () => {
    expect(isErrorCode("rate_limited")).toBe(true);
    expect(isErrorCode("teapot")).toBe(false);
    expect(isErrorCode(429)).toBe(false);
  });
});

describe("parseInput", () => {
  it("returns parsed data or throws invalid_request naming the field", async () => {
    const { z } = await import("zod");
    const { parseInput } = await import("./index.js");
    const schema = z.object({ limit: z.number().int().max(10), nested: z.object({ name: z.string() }) });
    expect(parseInput(schema, { limit: 3, nested: { name: "a" } })).toEqual({ limit: 3, nested: { name: "a" } });
    expect(() => parseInput(schema, { limit: 30, nested: { name: "a" } })).toThrow(/^limit: /);
    try {
      parseInput(schema, { limit: 1, nested: {} });
    } catch (err) {
      expect(err).toMatchObject({ code: "invalid_request" });
      expect((err as Error).message).toMatch(/^nested\.name: /);
    }
  });
});
