import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import { HoldId, NonNegativeUnits } from "../schemas.js";

export const MAX_REPORTS = 500;

export const AllotmentReport = z.object({
  hold_id: HoldId,
  /** What the caller has promised from the allotment: calls in flight plus its charges, posted or not. */
  claimed_units: NonNegativeUnits,
  /** The caller's counter: a report with a version not above the stored one is ignored. */
  version: NonNegativeUnits,
});
export const ReportAllotmentsInput = z.object({ reports: z.array(AllotmentReport).max(MAX_REPORTS) });
export type ReportAllotmentsInput = z.input<typeof ReportAllotmentsInput>;

/**
 * One statement for all reports: the highest version of each allotment wins, older
 * ones and unknown ids are ignored. The rows are locked in hold order, as ledger_apply
 * locks them (after the accounts), so the two never deadlock. Only the balance views
 * read the claims (getBalance).
 */
const REPORT_SQL = `
WITH r AS (
  SELECT DISTINCT ON (r.hold_id) r.hold_id, r.claimed, r.version
  FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS r (hold_id, claimed, version)
  ORDER BY r.hold_id, r.version DESC
),
locked AS MATERIALIZED (
  SELECT a.hold_id FROM allotments a JOIN r ON r.hold_id = a.hold_id AND a.claimed_version < r.version
  ORDER BY a.hold_id FOR NO KEY UPDATE OF a
)
UPDATE allotments a SET claimed = r.claimed, claimed_version = r.version, updated_at = now()
FROM r, locked l
WHERE a.hold_id = r.hold_id AND l.hold_id = a.hold_id AND a.claimed_version < r.version`;

/** Checks reports before anything else of their batch is applied (invalid_request). */
export function parseReports(input: ReportAllotmentsInput): ReportAllotmentsInput {
  const { reports } = parseInput(ReportAllotmentsInput, input);
  return { reports: reports.map((r) => ({ hold_id: r.hold_id, claimed_units: r.claimed_units.toString(), version: r.version.toString() })) };
}

/** Stores the reports that are newer than what is stored; answers how many were. */
export async function reportAllotments({ ctx, input }: { ctx: LedgerContext; input: ReportAllotmentsInput }): Promise<number> {
  const { reports } = parseInput(ReportAllotmentsInput, input);
  if (reports.length === 0) return 0;
  const { rowCount } = await ctx.pool.query(REPORT_SQL, [
    reports.map((r) => r.hold_id),
    reports.map((r) => r.claimed_units.toString()),
    reports.map((r) => r.version.toString()),
  ]);
  return rowCount ?? 0;
}
