import { forward } from "../forward.js";
import { OpenApiDocument } from "./openapi.types.js";
import { SYSTEM } from "./system-access.js";

export const openapi = forward(SYSTEM, "get /openapi.json", {
  summary: "The OpenAPI 3.1 description of every route, generated from the schemas that validate them.",
  responses: { 200: ["OpenAPI document", OpenApiDocument] },
  call: async ({ deps }) => deps.openapi,
  answer: (document) => ({ status: 200, body: document }),
});
