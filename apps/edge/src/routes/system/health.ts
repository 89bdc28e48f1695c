import { forward } from "../forward.js";
import { HealthResponse, LivenessResponse } from "./health.types.js";
import { SYSTEM } from "./system-access.js";

export const health = forward(SYSTEM, "get /health", {
  summary: "Gateway health: 200 when the gateway and its database answer, 503 when the database does not.",
  responses: { 200: ["healthy", HealthResponse], 503: ["database unreachable", HealthResponse] },
  call: ({ deps }) => deps.databaseUp(),
  answer: (up) => {
    const ts = new Date().toISOString();
    return up ? { status: 200, body: { status: "ok", db: "ok", ts } } : { status: 503, body: { status: "degraded", db: "error", ts } };
  },
});

export const liveness = forward(SYSTEM, "get /health/live", {
  summary:
    "Liveness: the process answers. Unlike /health it does not look at the database, so an outage takes replicas out of rotation without restarting them.",
  responses: { 200: ["alive", LivenessResponse] },
  call: async () => new Date().toISOString(),
  answer: (ts) => ({ status: 200, body: { status: "ok", ts } }),
});
