import { z } from "zod";
import { Email } from "./credentials.types.js";

/** POST /auth/login, /auth/refresh: a session's token pair. */
export const LoginRequest = z.strictObject({ email: Email, password: z.string().min(1).max(256) });
export type LoginRequest = z.infer<typeof LoginRequest>;

export const TokenPairResponse = z.object({
  token: z.string().describe("Session access token (JWT); send as Authorization: Bearer."),
  refresh_token: z.string().describe("One use only; presenting a used one signs the session out."),
  token_type: z.literal("Bearer"),
  expires_in: z.number().int().describe("Seconds until the access token expires."),
});

export const RefreshRequest = z.strictObject({ refresh_token: z.string().min(1).max(512) });
export type RefreshRequest = z.infer<typeof RefreshRequest>;
