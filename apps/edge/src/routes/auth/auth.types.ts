import { z } from "zod";

const Email = z.string().trim().toLowerCase().pipe(z.email()).describe("Sign-in email; compared case-insensitively.");
const Password = z.string().min(12).max(256);

export const RegisterRequest = z.strictObject({
  email: Email,
  password: Password,
  name: z.string().trim().min(1).max(200).optional(),
  tenant_name: z.string().trim().min(1).max(200).optional(),
});
export type RegisterRequest = z.infer<typeof RegisterRequest>;

export const RegisterResponse = z.object({ user_id: z.string(), tenant_id: z.string() });

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
