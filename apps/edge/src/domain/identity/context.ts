import type { Db } from "../../db.js";
import type { SessionCache } from "./session-cache.js";
import type { TokenSettings } from "./tokens.js";

export type IdentityContext = Db & {
  tokens: TokenSettings;
  sessions: SessionCache;
};
