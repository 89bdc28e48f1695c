import type { EdgeDeps } from "../../../deps.js";
import { listUsers } from "../../../domain/identity/list-users.js";
import { defineRoute } from "../../../http/route.js";
import { ListUsersQuery, UserListResponse } from "./list-users.types.js";

export const getUsers = defineRoute<EdgeDeps, Record<string, never>, ListUsersQuery>({
  method: "get",
  path: "/ops/users",
  summary: "Users with their tenant and roles, newest first (latest 200): whom to credit, discount or grant a platform role.",
  tags: ["ops"],
  access: { kind: "platform", level: "read" },
  query: ListUsersQuery,
  responses: { 200: { description: "users", schema: UserListResponse } },
  async handler({ deps, query }) {
    const data = await listUsers({ ctx: deps.identity, input: { ...(query.email ? { email: query.email } : {}), limit: 200 } });
    return { status: 200, body: { data } };
  },
});
