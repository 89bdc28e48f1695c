import { keyPrincipal } from "../../http/access.js";
import { forward, ok } from "../forward.js";
import { KeySelfResponse } from "./key.types.js";

export const getKeySelf = forward({ tags: ["keys"], access: { kind: "apiKey" } }, "get /v1/key", {
  summary: "The calling API key (never its secret). Passes the whole key policy, so it also tells whether a call would be admitted.",
  responses: { 200: ["the key", KeySelfResponse] },
  call: async ({ principal }) => keyPrincipal(principal),
  answer: (key) => ok({ id: key.keyId, name: key.keyName, prefix: key.keyPrefix, tenant_id: key.tenantId, scopes: [...key.scopes].sort() }),
});
