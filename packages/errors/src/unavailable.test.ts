import { describe, expect, it } from "vitest";
import { toErrorBody } from "./index.js";
import { isUnavailableFailure } from "./unavailable.js";

describe("failures of a dependency that is down", () => {
  it("are recognised from pg, Prisma and the network, also as a cause", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    expect(isUnavailableFailure(refused)).toBe(true);
    expect(isUnavailableFailure(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isUnavailableFailure(Object.assign(new Error("the database system is not yet accepting connections"), { code: "57P03" }))).toBe(true);
    expect(isUnavailableFailure(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }))).toBe(true);
    expect(
      isUnavailableFailure(Object.assign(new Error("Invalid `prisma.x.findUnique()` invocation: Database error. Code: `57P03`."), { code: "P2010" })),
    ).toBe(true);
    expect(isUnavailableFailure(Object.assign(new Error("Can't reach database server"), { code: "P1001" }))).toBe(true);
    expect(isUnavailableFailure(new Error("wrapped", { cause: refused }))).toBe(true);
  });

  it("are not every failure", () => {
    expect(isUnavailableFailure(new Error("duplicate key value violates unique constraint"))).toBe(false);
    expect(isUnavailableFailure(Object.assign(new Error("x"), { code: "23505" }))).toBe(false);
    expect(isUnavailableFailure(new TypeError("cannot read properties of undefined"))).toBe(false);
    expect(isUnavailableFailure(undefined)).toBe(false);
  });

  it("answer 503 unavailable, without the driver's message", () => {
    const { status, body } = toErrorBody(Object.assign(new Error("connect ECONNREFUSED 10.0.0.5:5432"), { code: "ECONNREFUSED" }), "req_1");
    expect(status).toBe(503);
    expect(body).toEqual({ error: "unavailable", message: "A service the gateway depends on is unavailable; try again shortly.", request_id: "req_1" });
    expect(toErrorBody(new Error("boom"), "req_2").status).toBe(500);
  });
});
