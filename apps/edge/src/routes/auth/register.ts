import type { EdgeDeps } from "../../deps.js";
import { registerUser } from "../../domain/identity/register-user.js";
import { defineRoute } from "../../http/route.js";
import { RegisterRequest, RegisterResponse } from "./auth.types.js";

export const register = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, RegisterRequest>({
  method: "post",
  path: "/auth/register",
  summary: "Create an account: a new tenant whose owner is the registering user.",
  tags: ["auth"],
  access: { kind: "public" },
  body: RegisterRequest,
  responses: {
    201: { description: "registered", schema: RegisterResponse },
    409: { description: "email already registered" },
    429: { description: "too many attempts from this address", headers: { "Retry-After": "seconds until the next attempt is admitted" } },
  },
  async handler({ deps, req, body }) {
    // Before the password is hashed: a refused attempt costs no scrypt run.
    await deps.identity.attempts.admitAddress("register", deps.keys.clientIp.resolve(req));
    const created = await registerUser({
      ctx: deps.identity,
      input: { email: body.email, password: body.password, name: body.name, tenantName: body.tenant_name },
    });
    return { status: 201, body: { user_id: created.userId, tenant_id: created.tenantId } };
  },
});
