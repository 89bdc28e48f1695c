import type { EventData, EventType } from "@gateway/events";
import type { Logger } from "@gateway/logger";
import type { Db } from "../../db.js";
import type { ClientIpResolver } from "./client-ip.js";
import type { KeyStore } from "./key-store.js";
import type { KeyLimits } from "./limits.js";

export type KeysContext = Db & {
  store: KeyStore;
  limits: KeyLimits;
  clientIp: ClientIpResolver;
  /** Writes an event that has no database change of its own (a denial) to the outbox, as its own transaction. */
  emitAlone: <T extends EventType>(type: T, data: EventData<T>) => Promise<unknown>;
  logger: Logger;
  /** The key expiry notices' scan, told of new keys with an expiry (docs/decisions/0210). */
  expiryNotices?: { keyCreated(expiresAt: Date | null): void };
};
