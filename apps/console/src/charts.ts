// Calls and spend per day and per model, computed from the usage list (GET
// /console/services/managed-ai/usage). Spend counts what was charged: the final
// cost of completed records; a record still reserved or in review counts as a call.
import type { ItemOf } from "./api-types.js";

export type UsageRecord = ItemOf<"GET /console/services/managed-ai/usage">;

export type Bucket = { label: string; calls: number; spendUnits: number };

function bucketBy(records: UsageRecord[], key: (r: UsageRecord) => string): Map<string, Bucket> {
  const out = new Map<string, Bucket>();
  for (const r of records) {
    const label = key(r);
    const b = out.get(label) ?? { label, calls: 0, spendUnits: 0 };
    b.calls += 1;
    b.spendUnits += r.final_units ?? 0;
    out.set(label, b);
  }
  return out;
}

/** One bucket per UTC day from the oldest record's day to the newest's (days without calls included), oldest first. */
export function perDay(records: UsageRecord[]): Bucket[] {
  if (records.length === 0) return [];
  const byDay = bucketBy(records, (r) => r.created_at.slice(0, 10));
  const days = [...byDay.keys()].sort();
  const out: Bucket[] = [];
  const last = Date.parse(`${days[days.length - 1]}T00:00:00Z`);
  for (let t = Date.parse(`${days[0]}T00:00:00Z`); t <= last; t += 86_400_000) {
    const label = new Date(t).toISOString().slice(0, 10);
    out.push(byDay.get(label) ?? { label, calls: 0, spendUnits: 0 });
  }
  return out;
}

/** One bucket per model alias, most calls first. */
export function perModel(records: UsageRecord[]): Bucket[] {
  return [...bucketBy(records, (r) => r.model_alias).values()].sort((a, b) => b.calls - a.calls || a.label.localeCompare(b.label));
}
