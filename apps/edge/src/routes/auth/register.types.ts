import { z } from "zod";
import { Email, Password } from "./credentials.types.js";

/** POST /auth/register: an account, its tenant owned by the registering user. */
export const RegisterRequest = z.strictObject({
  email: Email,
  password: Password,
  name: z.string().trim().min(1).max(200).optional(),
  tenant_name: z.string().trim().min(1).max(200).optional(),
});
export type RegisterRequest = z.infer<typeof RegisterRequest>;

export const RegisterResponse = z.object({ user_id: z.string(), tenant_id: z.string() });
