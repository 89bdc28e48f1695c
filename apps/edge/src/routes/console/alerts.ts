import { unitsToNumber } from "@gateway/contract";
import type { jobs } from "@gateway/protos";
import { forward, ok } from "../forward.js";
import { admin } from "./console-access.js";
import { AlertsResponse, PutAlertsRequest } from "./alerts.types.js";

// The tenant's alert threshold (CONTRACT.md section 13), kept by the jobs service (docs/decisions/0210).
const alertsJson = (a: jobs.AccountAlerts__Output) => ({ balance_low_units: a.balance_low_units ? unitsToNumber(a.balance_low_units) : null });

export const getAlerts = forward(admin("webhooks"), "get /console/alerts", {
  summary: "The tenant's balance alert threshold (null: no alert).",
  responses: { 200: ["the alert settings", AlertsResponse] },
  call: ({ deps, tenantId }) => deps.services.jobs.GetAccountAlerts({ tenant_id: tenantId }),
  answer: (alerts) => ok(alertsJson(alerts)),
});

export const putAlerts = forward(admin("webhooks"), "put /console/alerts", {
  summary: "Set the balance alert threshold: `balance.low` is sent once each time the available balance falls below it (null turns it off).",
  body: PutAlertsRequest,
  responses: { 200: ["the alert settings", AlertsResponse] },
  call: ({ deps, body: { balance_low_units: units }, tenantId }) =>
    deps.services.jobs.PutAccountAlerts({ tenant_id: tenantId, ...(units === null ? {} : { balance_low_units: String(units) }) }),
  answer: (alerts) => ok(alertsJson(alerts)),
});
