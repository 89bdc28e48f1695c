import { AppError } from "@gateway/errors";

/** Tokens are 43 base64url characters; anything else is unknown without asking the database. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The one answer for unknown, expired and exhausted alike: none of them is told apart. */
export function gone(): AppError {
  return new AppError("not_found", "No such file, or it has expired or reached its download limit.");
}

export function checkToken(token: string): string {
  if (!TOKEN_PATTERN.test(token)) throw gone();
  return token;
}

/** The SQL condition of a file that may still be downloaded (alias-free; `now()` is the database's clock). */
export const AVAILABLE = `state = 'ready' AND (expires_at IS NULL OR expires_at > now()) AND (max_downloads IS NULL OR downloads < max_downloads)`;
