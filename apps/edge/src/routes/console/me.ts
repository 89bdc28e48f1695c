import { AppError } from "@gateway/errors";
import { sessionPrincipal } from "../../http/access.js";
import { forward, ok } from "../forward.js";
import { MeResponse } from "./me.types.js";

export const getMe = forward({ tags: ["console"], access: { kind: "session" } }, "get /console/me", {
  summary: "The signed-in user: tenant and roles.",
  responses: { 200: ["the caller", MeResponse] },
  async call({ deps, principal }) {
    const me = sessionPrincipal(principal);
    const user = await deps.db.prisma.user.findUnique({ where: { id: me.userId }, select: { email: true, name: true } });
    if (!user) throw new AppError("unauthorized", "The session's user no longer exists.");
    return { me, user };
  },
  answer: ({ me, user }) =>
    ok({ user_id: me.userId, email: user.email, name: user.name, tenant_id: me.tenantId, tenant_role: me.tenantRole, platform_role: me.platformRole }),
});
