import { AppError } from "@gateway/errors";
import type { EdgeDeps } from "../../deps.js";
import { defineRoute } from "../../http/route.js";

export const metrics = defineRoute<EdgeDeps>({
  method: "get",
  path: "/metrics",
  summary: "Prometheus metrics of this edge replica.",
  tags: ["system"],
  access: { kind: "public" },
  responses: { 200: { description: "Prometheus text format", contentType: "text/plain" } },
  async handler({ deps, res }) {
    if (!deps.env.EXPOSE_METRICS) throw new AppError("not_found", "No route for GET /metrics.");
    const text = await deps.registry.metrics();
    res.status(200).type(deps.registry.contentType).send(text);
    return { written: true };
  },
});
