import { registerUser } from "../../domain/identity/register-user.js";
import { forward } from "../forward.js";
import { RegisterRequest, RegisterResponse } from "./register.types.js";

export const register = forward({ tags: ["auth"], access: { kind: "public" } }, "post /auth/register", {
  summary: "Create an account: a new tenant whose owner is the registering user.",
  body: RegisterRequest,
  responses: {
    201: ["registered", RegisterResponse],
    409: "email already registered",
    429: { description: "too many attempts from this address", headers: { "Retry-After": "seconds until the next attempt is admitted" } },
  },
  async call({ deps, req, body }) {
    // Before the password is hashed: a refused attempt costs no scrypt run.
    await deps.identity.attempts.admitAddress("register", deps.keys.clientIp.resolve(req));
    return registerUser({ ctx: deps.identity, input: { email: body.email, password: body.password, name: body.name, tenantName: body.tenant_name } });
  },
  answer: (account) => ({ status: 201, body: { user_id: account.userId, tenant_id: account.tenantId } }),
});
