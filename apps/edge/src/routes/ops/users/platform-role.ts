import type { EdgeDeps } from "../../../deps.js";
import { setPlatformRole } from "../../../domain/identity/platform-roles.js";
import { sessionPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { PlatformRoleParams, PlatformRoleRequest, PlatformRoleResponse } from "./platform-role.types.js";

export const putPlatformRole = defineRoute<EdgeDeps, PlatformRoleParams, Record<string, never>, PlatformRoleRequest>({
  method: "put",
  path: "/ops/users/:id/platform-role",
  summary: "Grant or remove a user's platform role (platform_admin only).",
  tags: ["ops"],
  access: { kind: "platform", level: "write" },
  params: PlatformRoleParams,
  body: PlatformRoleRequest,
  responses: {
    200: { description: "role set", schema: PlatformRoleResponse },
    404: { description: "no such user" },
    409: { description: "would remove the last platform_admin" },
  },
  async handler({ deps, params, body, principal }) {
    const me = sessionPrincipal(principal);
    const data = await setPlatformRole({ ctx: deps.identity, input: { userId: params.id, role: body.role, changedBy: me.userId } });
    return { status: 200, body: { data } };
  },
});
