import type { Logger } from "@gateway/logger";
import type { Registry } from "@gateway/metrics";
import type { Services } from "./clients.js";
import type { Db } from "./db.js";
import type { IdentityContext } from "./domain/identity/context.js";
import type { KeysContext } from "./domain/keys/context.js";
import type { WidgetSessions } from "./domain/widget/widget-sessions.js";
import type { EdgeEnv } from "./env.js";

/** What route handlers get: the edge's collaborators, passed in (tests hand in real ones). */
export type EdgeDeps = {
  env: EdgeEnv;
  logger: Logger;
  registry: Registry;
  db: Db;
  identity: IdentityContext;
  keys: KeysContext;
  services: Services;
  /** Widget tokens: signing, verification and the session cache. */
  widgets: WidgetSessions;
  databaseUp(): Promise<boolean>;
  /** Filled once all routes are known. */
  openapi: Record<string, unknown>;
};
