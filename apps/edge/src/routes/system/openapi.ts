import { z } from "zod";
import type { EdgeDeps } from "../../deps.js";
import { defineRoute } from "../../http/route.js";

export const openapi = defineRoute<EdgeDeps>({
  method: "get",
  path: "/openapi.json",
  summary: "The OpenAPI 3.1 description of every route, generated from the schemas that validate them.",
  tags: ["system"],
  access: { kind: "public" },
  responses: { 200: { description: "OpenAPI document", schema: z.record(z.string(), z.unknown()) } },
  async handler({ deps }) {
    return { status: 200, body: deps.openapi };
  },
});
