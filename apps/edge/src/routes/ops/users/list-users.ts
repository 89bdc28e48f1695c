import { listUsers } from "../../../domain/identity/list-users.js";
import { forward, ok } from "../../forward.js";
import { opsRead } from "../ops-access.js";
import { ListUsersQuery, UserListResponse } from "./list-users.types.js";

export const getUsers = forward(opsRead(), "get /ops/users", {
  summary: "Users with their tenant and roles, newest first (latest 200): whom to credit, discount or grant a platform role.",
  query: ListUsersQuery,
  responses: { 200: ["users", UserListResponse] },
  call: ({ deps, query }) => listUsers({ ctx: deps.identity, input: { ...(query.email ? { email: query.email } : {}), limit: 200 } }),
  answer: ok,
});
