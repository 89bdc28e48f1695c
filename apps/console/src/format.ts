// Money arrives as integer units of USD 0.0001 (CONTRACT §1); shown as USD with 4 decimals.
import { unitsToUsdString } from "@gateway/contract/money";
import type { ItemOf } from "./api-types.js";

/**
 * `123456789` → `"$12,345.6789"`: the gateway's one units-to-USD conversion
 * (`@gateway/contract/money`, exact, the cost headers' form) with a dollar sign and
 * thousands separators for reading.
 */
export function usd(units: number | null | undefined): string {
  if (units === null || units === undefined || !Number.isSafeInteger(units)) return "—";
  const decimal = unitsToUsdString(BigInt(units));
  const negative = decimal.startsWith("-");
  const [whole = "0", frac = "0000"] = (negative ? decimal.slice(1) : decimal).split(".");
  return `${negative ? "-" : ""}$${BigInt(whole).toLocaleString("en-US")}.${frac}`;
}

/** "2026-11-22T16:49:38.123Z" → "2026-11-22 16:49:38 UTC". */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** A whole number from a form field; empty → undefined; anything else → NaN (rejected by the API with a clear message). */
export function intOrUndefined(text: string): number | undefined {
  const t = text.trim();
  if (t === "") return undefined;
  return /^-?\d+$/.test(t) ? Number(t) : Number.NaN;
}

/** A form's spend budget: the amount as typed, and its period. */
export type BudgetForm = { budget_units: string; budget_period: string };

/** A budget's part of a request body: the amount with its period, or nothing when the amount is empty (no budget). */
export function budgetBody(form: BudgetForm): { budget_units?: number; budget_period?: string } {
  const units = intOrUndefined(form.budget_units);
  return units === undefined ? {} : { budget_units: units, budget_period: form.budget_period };
}

/** "a, b  c" → ["a","b","c"]; empty → undefined. */
export function listOrUndefined(text: string): string[] | undefined {
  const items = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
}

const BYTE_UNITS = ["KiB", "MiB", "GiB", "TiB"];

/** A size for people: bytes below 1 KiB, else binary units with up to one decimal ("1.5 MiB", "10 GiB"). */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  if (Math.abs(n) < 1024) return `${n} B`;
  let value = n / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number(value.toFixed(1)).toLocaleString("en-US")} ${BYTE_UNITS[unit]}`;
}

/** A spend budget's current period, as keys and instances show it (CONTRACT §3b). */
export type BudgetState = ItemOf<"GET /console/keys">["budget"];

/** "$0.0070 of $0.0100 this day ($0.0030 left) · resets 2026-11-26 00:00:00 UTC"; null → "none". */
export function budgetText(b: BudgetState | undefined): string {
  if (!b) return "none";
  const left = Math.max(0, b.limit_units - b.spent_units - b.reserved_units);
  return `${usd(b.spent_units)} of ${usd(b.limit_units)} this ${b.period} (${usd(left)} left) · resets ${when(b.resets_at)}`;
}
