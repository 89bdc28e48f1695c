import { describe, expect, it } from "vitest";
// @ts-expect-error -- plain ESM script without types
import { breakingChanges } from "../scripts/compat.mjs";
import { filesV1, healthV1, jobsV1, ledgerV1, managedAiV1, messagingV1 } from "./index.js";

describe("contracts", () => {
  it("load every service definition with its methods", () => {
    expect(Object.keys(healthV1.definition())).toEqual(["Check", "Watch"]);
    expect(healthV1.definition().Watch.responseStream).toBe(true);
    expect(ledgerV1.definition().Credit.path).toBe("/gateway.ledger.v1.LedgerService/Credit");
    for (const c of [managedAiV1, jobsV1, messagingV1, filesV1]) expect(Object.keys(c.definition()).length).toBeGreaterThan(0);
  });

  it("decode int64 as decimal strings and keep snake_case", () => {
    const def = ledgerV1.definition().Credit;
    const bytes = def.requestSerialize({ operation_id: "op_1", tenant_id: "t", units: "9007199254740993", reason: "r" });
    expect(def.requestDeserialize(bytes)).toEqual({ operation_id: "op_1", tenant_id: "t", units: "9007199254740993", reason: "r" });
  });
});

describe("breakingChanges", () => {
  const msg = (fields: Record<number, { name: string; type: string; repeated?: boolean }>, reserved: number[][] = []) => ({
    kind: "message",
    fields: Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, { repeated: false, map: false, ...f }])),
    reserved,
  });
  const svc = (methods: Record<string, object>) => ({ kind: "service", methods });

  it("accepts additions", () => {
    const before = { "p.A": msg({ 1: { name: "a", type: "string" } }) };
    const after = { "p.A": msg({ 1: { name: "a", type: "string" }, 2: { name: "b", type: "int64" } }), "p.B": msg({}) };
    expect(breakingChanges(before, after)).toEqual([]);
  });

  it("rejects a removed field unless its number is reserved", () => {
    const before = { "p.A": msg({ 1: { name: "a", type: "string" }, 2: { name: "b", type: "string" } }) };
    expect(breakingChanges(before, { "p.A": msg({ 1: { name: "a", type: "string" } }) })).toEqual(["p.A: field 2 (b) removed without reserving its number"]);
    expect(breakingChanges(before, { "p.A": msg({ 1: { name: "a", type: "string" } }, [[2, 2]]) })).toEqual([]);
  });

  it("rejects retyped fields, removed messages and changed methods", () => {
    const m = { request: "p.A", response: "p.A", requestStream: false, responseStream: false };
    const before = { "p.A": msg({ 1: { name: "a", type: "string" } }), "p.Gone": msg({}), "p.S": svc({ Get: m, Del: m }) };
    const after = { "p.A": msg({ 1: { name: "a", type: "int64" } }), "p.S": svc({ Get: { ...m, responseStream: true } }) };
    expect(breakingChanges(before, after)).toEqual([
      "p.A: field 1 changed type from string to int64",
      "message p.Gone was removed",
      "p.S.Get changed its signature",
      "p.S.Del was removed",
    ]);
  });
});
