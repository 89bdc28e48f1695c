import { unitsToNumber } from "@gateway/contract";
import type { jobs } from "@gateway/protos";
import type { EdgeDeps } from "../../deps.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { AlertsResponse, PutAlertsRequest } from "./alerts.types.js";

// The tenant's alert threshold (CONTRACT.md section 13), kept by the jobs service (docs/decisions/0210).
const alertsJson = (a: jobs.AccountAlerts__Output) => ({ balance_low_units: a.balance_low_units ? unitsToNumber(a.balance_low_units) : null });

export const getAlerts = defineRoute<EdgeDeps>({
  method: "get",
  path: "/console/alerts",
  summary: "The tenant's balance alert threshold (null: no alert).",
  tags: ["console", "webhooks"],
  access: { kind: "tenant", minRole: "admin" },
  responses: { 200: { description: "the alert settings", schema: AlertsResponse } },
  async handler({ deps, principal }) {
    return { status: 200, body: { data: alertsJson(await deps.services.jobs.GetAccountAlerts({ tenant_id: sessionPrincipal(principal).tenantId })) } };
  },
});

export const putAlerts = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, PutAlertsRequest>({
  method: "put",
  path: "/console/alerts",
  summary: "Set the balance alert threshold: `balance.low` is sent once each time the available balance falls below it (null turns it off).",
  tags: ["console", "webhooks"],
  access: { kind: "tenant", minRole: "admin" },
  body: PutAlertsRequest,
  responses: { 200: { description: "the alert settings", schema: AlertsResponse } },
  async handler({ deps, body, principal }) {
    const units = body.balance_low_units;
    const res = await deps.services.jobs.PutAccountAlerts({
      tenant_id: sessionPrincipal(principal).tenantId,
      ...(units === null ? {} : { balance_low_units: String(units) }),
    });
    return { status: 200, body: { data: alertsJson(res) } };
  },
});
