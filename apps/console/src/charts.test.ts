import { describe, expect, it } from "vitest";
import { perDay, perModel, type UsageRecord } from "./charts.js";

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
});
