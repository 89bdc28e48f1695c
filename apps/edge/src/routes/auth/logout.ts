import type { EdgeDeps } from "../../deps.js";
import { logout as endSession } from "../../domain/identity/sessions.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";

export const logout = defineRoute<EdgeDeps>({
  method: "post",
  path: "/auth/logout",
  summary: "Sign out: the session's access and refresh tokens stop working at once.",
  tags: ["auth"],
  access: { kind: "session" },
  responses: { 204: { description: "signed out" } },
  async handler({ deps, principal }) {
    const me = sessionPrincipal(principal);
    await endSession({ ctx: deps.identity, input: { sessionId: me.sessionId, userId: me.userId } });
    return { status: 204 };
  },
});
