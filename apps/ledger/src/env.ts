import { z } from "zod";
import { env, loadEnv as load, serviceEnvShape } from "@gateway/config";

export const LedgerEnv = z.object({
  ...serviceEnvShape({ service: "ledger", grpcPort: 50051, metricsPort: 9101 }),
  LEDGER_BATCH_MAX: env.int("At most this many reserves, captures, voids, posts and releases are committed together in one statement.", 200, {
    min: 1,
    max: 1_000,
  }),
  LEDGER_BATCH_CONCURRENCY: env.int("How many movement batches may be in flight at once; movements that arrive meanwhile wait and form the next batch.", 1, {
    min: 1,
    max: 32,
  }),
  METRICS_TENANT_LABEL: env.bool(
    "`gateway_ledger_available_units` has one series per tenant (`tenant` label); false: one series, the sum over tenants (large fleets; docs/decisions/0211).",
    true,
  ),
});
export type LedgerEnv = z.output<typeof LedgerEnv>;

export function loadEnv(source: Record<string, string | undefined>): LedgerEnv {
  return load(LedgerEnv, source);
}
