import { describe, expect, it } from "vitest";
import { decide, nothingOwed, type HoldState } from "./decide.js";

const row = (status: string, errorCode: string | null, extra: { usageJson?: string | null; stream?: boolean } = {}) => ({
  status,
  errorCode,
  usageJson: extra.usageJson ?? null,
  stream: extra.stream ?? false,
});
const open: HoldState = { status: "open", capturedUnits: 0n, releasedUnits: 0n };

describe("what the reconciler concludes from the ledger", () => {
  it("follows the ledger whenever the hold is settled, whatever the record says", () => {
    for (const r of [
      row("review", "ledger_unavailable"),
      row("review", "settlement_failed", { usageJson: "{}" }),
      row("reserved", null),
      row("review", "usage_unavailable"),
    ]) {
      expect(decide(r, { status: "captured", capturedUnits: 42n, releasedUnits: 8n })).toEqual({ kind: "completed", finalUnits: 42n });
      expect(decide(r, { status: "voided", capturedUnits: 0n, releasedUnits: 50n })).toEqual({ kind: "failed", refundedUnits: 50n });
      expect(decide(r, "none")).toEqual({ kind: "failed", refundedUnits: 0n });
    }
  });

  it("captures an open hold only when the charge is known, voids it only when nothing is owed", () => {
    expect(decide(row("review", "settlement_failed", { usageJson: '{"prompt_tokens":1,"completion_tokens":2}' }), open)).toEqual({ kind: "capture" });
    expect(decide(row("review", "settlement_failed"), open)).toEqual({ kind: "operator" });
    expect(decide(row("review", "ledger_unavailable"), open)).toEqual({ kind: "void" });
    expect(decide(row("review", "provider_error"), open)).toEqual({ kind: "void" });
    expect(decide(row("review", "provider_malformed_response", { stream: false }), open)).toEqual({ kind: "void" });
  });

  it("leaves unknown usage with an open hold to an operator", () => {
    for (const code of ["usage_unavailable", "client_disconnected", "stream_interrupted", "interrupted"])
      expect(decide(row("review", code), open)).toEqual({ kind: "operator" });
    // A stream's unreadable event came after content the client may have used.
    expect(decide(row("review", "provider_malformed_response", { stream: true }), open)).toEqual({ kind: "operator" });
    expect(decide(row("reserved", null), open)).toEqual({ kind: "operator" });
  });

  it("never calls a settled or in-flight record owed nothing", () => {
    expect(nothingOwed(row("failed", "provider_error"))).toBe(false);
    expect(nothingOwed(row("reserved", null))).toBe(false);
  });
});
