import type { EdgeDeps } from "../../deps.js";
import { login as loginUser } from "../../domain/identity/sessions.js";
import { defineRoute } from "../../http/route.js";
import { LoginRequest, TokenPairResponse } from "./auth.types.js";

export const login = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, LoginRequest>({
  method: "post",
  path: "/auth/login",
  summary: "Sign in; returns an access token and a one-use refresh token.",
  tags: ["auth"],
  access: { kind: "public" },
  body: LoginRequest,
  responses: {
    200: { description: "signed in", schema: TokenPairResponse },
    401: { description: "wrong email or password (one answer for both)" },
    429: { description: "too many attempts from this address or for this email", headers: { "Retry-After": "seconds until the next attempt is admitted" } },
  },
  async handler({ deps, req, body }) {
    return { status: 200, body: await loginUser({ ctx: deps.identity, input: { ...body, address: deps.keys.clientIp.resolve(req) } }) };
  },
});
