import type pg from "pg";
import { Gauge, type Registry } from "@gateway/metrics";
import type { Logger } from "@gateway/logger";
import { sampleAvailable } from "../domain/balance/sample.js";

/**
 * `gateway_ledger_available_units{tenant}` (CONTRACT.md section 13, docs/decisions/0211):
 * the balance views' available units, sampled when Prometheus scrapes (one statement
 * per scrape, nothing between scrapes: an idle ledger stays idle). `perTenant` false
 * gives one series, the sum over tenants.
 */
export function availableGauge(options: { registry: Registry; pool: pg.Pool; perTenant: boolean; logger: Logger }): Gauge {
  const { pool, perTenant, logger } = options;
  return new Gauge({
    name: "gateway_ledger_available_units",
    help: "Available balance in units of USD 0.0001 as the balance views show it (allotments' unclaimed funds included), sampled at scrape.",
    labelNames: perTenant ? ["tenant"] : [],
    registers: [options.registry],
    async collect() {
      try {
        const rows = await sampleAvailable(pool, perTenant);
        this.reset();
        for (const row of rows) {
          if (perTenant) this.set({ tenant: row.tenantId }, Number(row.available));
          else this.set(Number(row.available));
        }
      } catch (err) {
        logger.warn({ err }, "available balances not sampled");
      }
    },
  });
}
