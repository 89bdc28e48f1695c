import { AppError } from "@gateway/errors";
import { forward } from "../forward.js";
import { SYSTEM } from "./system-access.js";

export const metrics = forward(SYSTEM, "get /metrics", {
  summary: "Prometheus metrics of this edge replica.",
  responses: { 200: { description: "Prometheus text format", contentType: "text/plain" } },
  call: ({ deps }) => {
    if (!deps.env.EXPOSE_METRICS) throw new AppError("not_found", "No route for GET /metrics.");
    return deps.registry.metrics();
  },
  answer: (text, { deps, res }) => {
    res.status(200).type(deps.registry.contentType).send(text);
    return { written: true };
  },
});
