import type { EdgeDeps } from "../../deps.js";
import { keyPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { KeySelfResponse } from "./key.types.js";

export const getKeySelf = defineRoute<EdgeDeps>({
  method: "get",
  path: "/v1/key",
  summary: "The calling API key (never its secret). Passes the whole key policy, so it also tells whether a call would be admitted.",
  tags: ["keys"],
  access: { kind: "apiKey" },
  responses: { 200: { description: "the key", schema: KeySelfResponse } },
  async handler({ principal }) {
    const key = keyPrincipal(principal);
    return {
      status: 200,
      body: { data: { id: key.keyId, name: key.keyName, prefix: key.keyPrefix, tenant_id: key.tenantId, scopes: [...key.scopes].sort() } },
    };
  },
});
