import type { Db } from "../../db.js";
import type { AuthAttempts } from "./attempt-limits.js";
import type { SessionCache } from "./session-cache.js";
import type { TokenSettings } from "./tokens.js";

export type IdentityContext = Db & {
  tokens: TokenSettings;
  sessions: SessionCache;
  /** Limits on sign-in, registration and refresh attempts (per address, per email, backoff). */
  attempts: AuthAttempts;
};
