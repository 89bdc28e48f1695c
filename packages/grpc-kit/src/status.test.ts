import { Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { AppError, ERROR_CODES } from "@gateway/errors";
import { describe, expect, it } from "vitest";
import { GRPC_STATUS, fromServiceError, isUnimplemented, toStatus } from "./status.js";

function asServiceError(s: ReturnType<typeof toStatus>): ServiceError {
  return Object.assign(new Error(s.details), { code: s.code!, details: s.details!, metadata: s.metadata ?? new Metadata() });
}

describe("error mapping", () => {
  it("covers every contract code", () => {
    expect(Object.keys(GRPC_STATUS).sort()).toEqual([...ERROR_CODES].sort());
  });

  it("round-trips every code with message, extras and Retry-After", () => {
    for (const code of ERROR_CODES) {
      const err = new AppError(code, `m-${code}`, { extra: { k: code }, retryAfter: 3 });
      const back = fromServiceError(asServiceError(toStatus(err)), "svc");
      expect(back).toMatchObject({ code, message: `m-${code}`, extra: { k: code }, retryAfter: 3 });
      expect(toStatus(err).code).toBe(GRPC_STATUS[code]);
    }
  });

  it("answers a database that is down or restarting as unavailable, never internal (issue 10)", () => {
    const down = Object.assign(new Error("the database system is not yet accepting connections"), { code: "57P03" });
    const back = fromServiceError(asServiceError(toStatus(down)), "managed-ai");
    expect(toStatus(down).code).toBe(status.UNAVAILABLE);
    expect(back.code).toBe("unavailable");
    expect(back.message).not.toContain("database system");
    expect(toStatus(new Error("a bug")).code).toBe(status.INTERNAL);
  });

  it("maps transport failures without a code trailer", () => {
    const raw = (code: status, details = "x") => Object.assign(new Error(details), { code, details, metadata: new Metadata() });
    expect(fromServiceError(raw(status.UNAVAILABLE), "ledger")).toMatchObject({ code: "unavailable", message: "ledger is unavailable; try again later." });
    expect(fromServiceError(raw(status.DEADLINE_EXCEEDED), "ledger").code).toBe("unavailable");
    expect(fromServiceError(raw(status.NOT_FOUND, "unknown service"), "x")).toMatchObject({ code: "not_found", message: "unknown service" });
    expect(fromServiceError(raw(status.RESOURCE_EXHAUSTED), "x").code).toBe("payload_too_large");
    // Ambiguous in the table (insufficient_balance and validation_failed): never guessed.
    expect(fromServiceError(raw(status.FAILED_PRECONDITION, "secret detail"), "x")).toMatchObject({ code: "internal_error", message: "internal error" });
  });

  it("recognises a method the peer does not have (an older build), and nothing else", () => {
    const raw = (code: status) => Object.assign(new Error("x"), { code, details: "x", metadata: new Metadata() });
    expect(isUnimplemented(fromServiceError(raw(status.UNIMPLEMENTED), "ledger"))).toBe(true);
    expect(isUnimplemented(raw(status.UNIMPLEMENTED))).toBe(true);
    expect(isUnimplemented(fromServiceError(raw(status.UNAVAILABLE), "ledger"))).toBe(false);
    expect(isUnimplemented(new AppError("not_found", "x"))).toBe(false);
    expect(isUnimplemented(undefined)).toBe(false);
  });

  it("never sends an unknown error's message", () => {
    const s = toStatus(new Error("password=hunter2"));
    expect(s.code).toBe(status.INTERNAL);
    expect(s.details).toBe("internal error");
    expect(s.metadata?.get("x-error-code")).toEqual(["internal_error"]);
  });
});
