import type { z } from "zod";
import { AppError } from "./app-error.js";

/** The first issue of a failed parse, as "field: message". */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid request";
  const field = issue.path.map(String).join(".");
  return field ? `${field}: ${issue.message}` : issue.message;
}

/** Validates input at a boundary; a failure is the caller's: invalid_request naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new AppError("invalid_request", describeIssue(result.error));
}
