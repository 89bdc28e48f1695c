import { login as loginUser, logout as endSession, refresh as rotate } from "../../domain/identity/sessions.js";
import { sessionPrincipal } from "../../http/access.js";
import { forward, noContent } from "../forward.js";
import { LoginRequest, RefreshRequest, TokenPairResponse } from "./sessions.types.js";

const PUBLIC = { tags: ["auth"], access: { kind: "public" } } as const;
const tooMany = (who: string) => ({ description: `too many attempts from ${who}`, headers: { "Retry-After": "seconds until the next attempt is admitted" } });

export const login = forward(PUBLIC, "post /auth/login", {
  summary: "Sign in; returns an access token and a one-use refresh token.",
  body: LoginRequest,
  responses: { 200: ["signed in", TokenPairResponse], 401: "wrong email or password (one answer for both)", 429: tooMany("this address or for this email") },
  call: ({ deps, req, body }) => loginUser({ ctx: deps.identity, input: { ...body, address: deps.keys.clientIp.resolve(req) } }),
  answer: (pair) => ({ status: 200, body: pair }),
});

export const refresh = forward(PUBLIC, "post /auth/refresh", {
  summary: "Exchange a refresh token for a new pair. Each refresh token works once; reuse signs the session out.",
  body: RefreshRequest,
  responses: { 200: ["rotated", TokenPairResponse], 401: "invalid, expired or reused", 429: tooMany("this address") },
  async call({ deps, req, body }) {
    await deps.identity.attempts.admitAddress("refresh", deps.keys.clientIp.resolve(req));
    return rotate({ ctx: deps.identity, input: { refreshToken: body.refresh_token } });
  },
  answer: (pair) => ({ status: 200, body: pair }),
});

export const logout = forward({ tags: ["auth"], access: { kind: "session" } }, "post /auth/logout", {
  summary: "Sign out: the session's access and refresh tokens stop working at once.",
  responses: { 204: "signed out" },
  call: ({ deps, principal }) => {
    const me = sessionPrincipal(principal);
    return endSession({ ctx: deps.identity, input: { sessionId: me.sessionId, userId: me.userId } });
  },
  answer: noContent,
});
