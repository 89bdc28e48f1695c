import { z } from "zod";
import type { EdgeDeps } from "../../deps.js";
import { defineRoute } from "../../http/route.js";

export const HealthResponse = z.object({
  status: z.enum(["ok", "degraded"]),
  db: z.enum(["ok", "error"]),
  ts: z.string().describe("ISO 8601 UTC"),
});

export const health = defineRoute<EdgeDeps>({
  method: "get",
  path: "/health",
  summary: "Gateway health: 200 when the gateway and its database answer, 503 when the database does not.",
  tags: ["system"],
  access: { kind: "public" },
  responses: {
    200: { description: "healthy", schema: HealthResponse },
    503: { description: "database unreachable", schema: HealthResponse },
  },
  async handler({ deps }) {
    const up = await deps.databaseUp();
    const ts = new Date().toISOString();
    return up ? { status: 200, body: { status: "ok", db: "ok", ts } } : { status: 503, body: { status: "degraded", db: "error", ts } };
  },
});

export const liveness = defineRoute<EdgeDeps>({
  method: "get",
  path: "/health/live",
  summary:
    "Liveness: the process answers. Unlike /health it does not look at the database, so an outage takes replicas out of rotation without restarting them.",
  tags: ["system"],
  access: { kind: "public" },
  responses: { 200: { description: "alive", schema: z.object({ status: z.literal("ok"), ts: z.string() }) } },
  async handler() {
    return { status: 200, body: { status: "ok", ts: new Date().toISOString() } };
  },
});
