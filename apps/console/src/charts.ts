// Calls and spend per day and per model, computed from the usage list (GET
// /console/services/managed-ai/usage). Spend counts only what was charged: the final
// cost of completed managed records (bring-your-own-key records are never charged, and
// a record still reserved, failed or in review has charged nothing); every record counts as a call.
import type { ItemOf } from "./api-types.js";

export type UsageRecord = ItemOf<"GET /console/services/managed-ai/usage">;

export type Bucket = { label: string; calls: number; spendUnits: number };

function bucketBy(records: UsageRecord[], key: (r: UsageRecord) => string): Map<string, Bucket> {
  const out = new Map<string, Bucket>();
  for (const r of records) {
    const label = key(r);
    const b = out.get(label) ?? { label, calls: 0, spendUnits: 0 };
    b.calls += 1;
    b.spendUnits += chargedUnits(r);
    out.set(label, b);
  }
  return out;
}

/** What a record charged to the balance: a completed managed record's final cost, else nothing. */
export function chargedUnits(r: UsageRecord): number {
  return r.mode === "managed" && r.status === "completed" ? (r.final_units ?? 0) : 0;
}

/** The charged total of records and how many of them were charged. */
export function chargedTotals(records: UsageRecord[]): { units: number; records: number } {
  let units = 0;
  let charged = 0;
  for (const r of records) {
    if (r.mode !== "managed" || r.status !== "completed") continue;
    units += r.final_units ?? 0;
    charged++;
  }
  return { units, records: charged };
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
