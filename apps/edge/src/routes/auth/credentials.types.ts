import { z } from "zod";

/** What the account and session schemas share: the sign-in email and the password's bounds. */
export const Email = z.string().trim().toLowerCase().pipe(z.email()).describe("Sign-in email; compared case-insensitively.");
export const Password = z.string().min(12).max(256);
