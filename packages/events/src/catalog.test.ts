import { describe, expect, it } from "vitest";
import { EVENT_TYPES, InvalidEventError, PUBLISHED_IN_BATCHES, parseEnvelope, parseEnvelopeShape, subjectsFor, typePrefix } from "./index.js";

const good = {
  id: "evt_1",
  type: "ledger.credited",
  source: "ledger",
  occurred_at: "2026-11-25T00:00:00.000Z",
  request_id: null,
  data: { tenant_id: "ten_1", entry_id: "ent_1", operation_id: "op_1", units: "1", available_units: "1", reason: "test" },
};

describe("parseEnvelopeShape", () => {
  it("answers the envelope as parseEnvelope does for a valid event", () => {
    expect(parseEnvelopeShape(good)).toEqual(parseEnvelope(good));
  });

  it("checks the envelope, not the payload's fields", () => {
    const odd = { ...good, data: { tenant_id: "ten_1" } };
    expect(() => parseEnvelope(odd)).toThrow(InvalidEventError);
    expect(parseEnvelopeShape(odd).data).toEqual({ tenant_id: "ten_1" });
  });

  it.each([
    ["not an object", "x"],
    ["no id", { ...good, id: "" }],
    ["an unknown type", { ...good, type: "nope.nothing" }],
    ["a request id that is a number", { ...good, request_id: 5 }],
    ["no occurred_at", { ...good, occurred_at: undefined }],
    ["a payload that is not an object", { ...good, data: [1] }],
  ])("refuses %s", (_what, raw) => {
    expect(() => parseEnvelopeShape(raw)).toThrow(InvalidEventError);
  });
});

describe("events published in batches (docs/decisions/0331)", () => {
  const subjects = subjectsFor("ns");
  it("are the request path's, each under its prefix's batch subject, which no event type's subject can be", () => {
    for (const type of EVENT_TYPES) {
      expect(subjects.isBatch(subjects.subject(type))).toBe(false);
      expect(subjects.filterFor(type)).toBe(PUBLISHED_IN_BATCHES.has(type) ? `ns.events.${typePrefix(type)}.batch` : subjects.subject(type));
    }
    expect(subjects.filterFor("ledger.posted")).toBe("ns.events.ledger.batch");
    expect(subjects.filterFor("managed_ai.request_settled")).toBe("ns.events.managed_ai.batch");
    expect(subjects.isBatch(subjects.batch("ledger"))).toBe(true);
  });
});
