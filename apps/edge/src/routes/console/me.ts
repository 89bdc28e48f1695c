import { AppError } from "@gateway/errors";
import type { EdgeDeps } from "../../deps.js";
import { sessionPrincipal } from "../../http/access.js";
import { MeResponse } from "./me.types.js";
import { defineRoute } from "../../http/route.js";

export const getMe = defineRoute<EdgeDeps>({
  method: "get",
  path: "/console/me",
  summary: "The signed-in user: tenant and roles.",
  tags: ["console"],
  access: { kind: "session" },
  responses: { 200: { description: "the caller", schema: MeResponse } },
  async handler({ deps, principal }) {
    const me = sessionPrincipal(principal);
    const user = await deps.db.prisma.user.findUnique({ where: { id: me.userId }, select: { email: true, name: true } });
    if (!user) throw new AppError("unauthorized", "The session's user no longer exists.");
    return {
      status: 200,
      body: {
        data: { user_id: me.userId, email: user.email, name: user.name, tenant_id: me.tenantId, tenant_role: me.tenantRole, platform_role: me.platformRole },
      },
    };
  },
});
