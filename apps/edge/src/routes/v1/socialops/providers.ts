import { forward, ok } from "../../forward.js";
import { ProvidersResponse } from "./providers.types.js";

export const getSocialOpsProviders = forward({ tags: ["socialops"], access: { kind: "apiKey" } }, "get /v1/apps/socialops/providers", {
  summary: "Inbound SocialOps providers this deployment understands (any valid key).",
  responses: { 200: ["providers", ProvidersResponse] },
  call: ({ deps }) => deps.services.messaging.ListSocialOpsProviders({}),
  answer: (res) => ok(res.providers.map((p) => ({ id: p.id, name: p.name }))),
});
