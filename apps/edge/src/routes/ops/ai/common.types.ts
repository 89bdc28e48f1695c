import { z } from "zod";

/**
 * What the /ops/ai resources' schemas (CONTRACT.md section 5) share: timestamps and
 * the expected version of a versioned write. Writes reject unknown fields.
 */

export const Timestamp = z.string().describe("ISO 8601 UTC");

/** `version` of a versioned write: absent for no check; else the current version (0 to create). */
export const ExpectedVersion = z
  .number()
  .int()
  .min(0)
  .max(2_147_483_647)
  .optional()
  .describe("The version this write replaces: 409 unless it is the current one. 0 (or absent) creates. Absent: no check.");
