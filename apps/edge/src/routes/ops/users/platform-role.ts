import { setPlatformRole } from "../../../domain/identity/platform-roles.js";
import { sessionPrincipal } from "../../../http/access.js";
import { forward, ok } from "../../forward.js";
import { opsWrite } from "../ops-access.js";
import { PlatformRoleParams, PlatformRoleRequest, PlatformRoleResponse } from "./platform-role.types.js";

export const putPlatformRole = forward(opsWrite(), "put /ops/users/:id/platform-role", {
  summary: "Grant or remove a user's platform role (platform_admin only).",
  params: PlatformRoleParams,
  body: PlatformRoleRequest,
  responses: { 200: ["role set", PlatformRoleResponse], 404: "no such user", 409: "would remove the last platform_admin" },
  call: ({ deps, params, body, principal }) =>
    setPlatformRole({ ctx: deps.identity, input: { userId: params.id, role: body.role, changedBy: sessionPrincipal(principal).userId } }),
  answer: ok,
});
