import type { EdgeDeps } from "../../deps.js";
import { refresh as rotate } from "../../domain/identity/sessions.js";
import { defineRoute } from "../../http/route.js";
import { RefreshRequest, TokenPairResponse } from "./auth.types.js";

export const refresh = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, RefreshRequest>({
  method: "post",
  path: "/auth/refresh",
  summary: "Exchange a refresh token for a new pair. Each refresh token works once; reuse signs the session out.",
  tags: ["auth"],
  access: { kind: "public" },
  body: RefreshRequest,
  responses: {
    200: { description: "rotated", schema: TokenPairResponse },
    401: { description: "invalid, expired or reused" },
    429: { description: "too many attempts from this address", headers: { "Retry-After": "seconds until the next attempt is admitted" } },
  },
  async handler({ deps, req, body }) {
    await deps.identity.attempts.admitAddress("refresh", deps.keys.clientIp.resolve(req));
    return { status: 200, body: await rotate({ ctx: deps.identity, input: { refreshToken: body.refresh_token } }) };
  },
});
