import { describe, expect, it } from "vitest";
import { chargedTotals, perDay, perModel, type UsageRecord } from "./charts.js";

const record = (created_at: string, model_alias: string, final_units: number | null, status: UsageRecord["status"] = "completed"): UsageRecord => ({
  id: `${created_at}-${model_alias}`,
  mode: "managed",
  api: "chat_completions",
  api_key_id: null,
  service_alias: "demo",
  model_alias,
  price_id: "price_1",
  status,
  reserved_units: 100,
  final_units,
  usage_json: null,
  error_code: null,
  created_at,
});

describe("usage charts", () => {
  const records = [
    record("2026-11-22T10:00:00.000Z", "small", 7),
    record("2026-11-22T23:59:59.999Z", "large", 30),
    record("2026-11-20T00:00:00.000Z", "small", 5),
    record("2026-11-20T08:00:00.000Z", "small", null, "failed"),
  ];

  it("counts calls and the final cost per UTC day, days without calls included, oldest first", () => {
    expect(perDay(records)).toEqual([
      { label: "2026-11-20", calls: 2, spendUnits: 5 },
      { label: "2026-11-21", calls: 0, spendUnits: 0 },
      { label: "2026-11-22", calls: 2, spendUnits: 37 },
    ]);
  });

  it("counts calls and the final cost per model, most calls first", () => {
    expect(perModel(records)).toEqual([
      { label: "small", calls: 3, spendUnits: 12 },
      { label: "large", calls: 1, spendUnits: 30 },
    ]);
  });

  it("is empty without records", () => {
    expect(perDay([])).toEqual([]);
    expect(perModel([])).toEqual([]);
  });

  it("counts as spend only what was charged: completed managed records, never bring-your-own-key ones", () => {
    const byok = { ...record("2026-11-22T11:00:00.000Z", "small", 999), mode: "byok" as const, id: "byok" };
    const review = { ...record("2026-11-22T12:00:00.000Z", "small", 50, "review"), id: "review" };
    const mixed = [...records, byok, review];
    expect(chargedTotals(mixed)).toEqual({ units: 42, records: 3 });
    expect(perModel(mixed).find((b) => b.label === "small")).toEqual({ label: "small", calls: 5, spendUnits: 12 });
  });
});
