import { fileURLToPath } from "node:url";
import { redactConfig } from "@gateway/config";
import { CONSOLE_DIST_DIR } from "@gateway/console";
import { Broadcast } from "@gateway/events-runtime";
import { startInfrastructure } from "@gateway/runtime";
import { createApp } from "./app.js";
import { closeServices, createServices } from "./clients.js";
import { createPrisma, type PrismaClient, type Tx } from "./db.js";
import type { EdgeDeps } from "./deps.js";
import { AuthAttempts } from "./domain/identity/attempt-limits.js";
import { decoyHash } from "./domain/identity/passwords.js";
import { bootstrapPlatformAdmin } from "./domain/identity/platform-roles.js";
import { SessionCache, type SessionInvalidation } from "./domain/identity/session-cache.js";
import { authenticateKey } from "./domain/keys/authenticate-key.js";
import { ClientIpResolver } from "./domain/keys/client-ip.js";
import { KeyExpiryNotices } from "./domain/keys/expiry-notices.js";
import type { KeysContext } from "./domain/keys/context.js";
import { KeyStore, type KeyInvalidation } from "./domain/keys/key-store.js";
import { KeyLimits } from "./domain/keys/limits.js";
import { widgetRateLimiter } from "./domain/widget/rate-limit.js";
import { WIDGET_SESSIONS_BROADCAST, WidgetSessions, type WidgetSessionInvalidation } from "./domain/widget/widget-sessions.js";
import { EdgeEnv, loadEnv } from "./env.js";
import { drainHttp, InFlight } from "./http/drain.js";
import { createRedis } from "./redis.js";
import { routes } from "./routes/index.js";
import { clientErrorHandler } from "./http/client-error.js";
import { createAppServer } from "./http/server.js";
import { loneEvents } from "./storage/lone-events.js";

const env = loadEnv(process.env);
const infra = await startInfrastructure<Tx, PrismaClient>({
  service: "edge",
  env,
  config: redactConfig(EdgeEnv, env),
  prismaDir: fileURLToPath(new URL("../prisma", import.meta.url)),
  createPrisma,
});
const { logger, registry, prisma, pool, transact, relay, nats, subjects, shutdown } = infra;

// Redis holds key limits and versions; without it no API-key request is admitted (503, at once).
const redis = createRedis({ url: env.REDIS_URL, commandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS, reconnectMaxMs: env.REDIS_RECONNECT_MAX_MS }, logger);
try {
  await redis.connect();
} catch (err) {
  logger.fatal({ err }, "start-up failed: Redis is unreachable");
  await shutdown.run("start-up failed", 1);
}
shutdown.add("redis", async () => {
  await redis.quit();
});

// A TLS file that is missing or wrong (docs/decisions/0230) stops the start; the message names the variable.
const services = await (async () => {
  try {
    return createServices(env, registry);
  } catch (err) {
    logger.fatal({ err }, "start-up failed");
    return shutdown.run("start-up failed", 1);
  }
})();
const sessions = new SessionCache({
  prisma,
  secret: env.JWT_SECRET,
  ttlMs: env.SESSION_CACHE_TTL_MS,
  broadcast: new Broadcast<SessionInvalidation>(nats, subjects.broadcast("sessions"), logger),
});
sessions.listen();
const identity = {
  prisma,
  transact,
  sessions,
  attempts: new AuthAttempts(redis, env.REDIS_KEY_PREFIX, {
    perAddressPerMinute: env.AUTH_ATTEMPTS_PER_ADDRESS_PER_MINUTE,
    perEmailPerMinute: env.AUTH_ATTEMPTS_PER_EMAIL_PER_MINUTE,
    backoffAfterFailures: env.AUTH_BACKOFF_AFTER_FAILURES,
    backoffBaseMs: env.AUTH_BACKOFF_BASE_SECONDS * 1000,
    backoffMaxMs: env.AUTH_BACKOFF_MAX_SECONDS * 1000,
  }),
  tokens: { secret: env.JWT_SECRET, accessTtlSeconds: env.ACCESS_TOKEN_TTL_SECONDS, refreshTtlSeconds: env.REFRESH_TOKEN_TTL_SECONDS },
};
const store = new KeyStore({
  prisma,
  ttlMs: env.KEY_CACHE_TTL_MS,
  broadcast: new Broadcast<KeyInvalidation>(nats, subjects.broadcast("keys"), logger),
  logger,
});
store.listen();
const expiryNotices = new KeyExpiryNotices(
  { prisma, transact },
  { logger: logger.child({ component: "key-expiry" }), now: () => Date.now() + env.KEY_EXPIRY_CLOCK_OFFSET_MS, maxWaitMs: env.KEY_EXPIRY_SCAN_MAX_MS },
);
const keys: KeysContext = {
  prisma,
  transact,
  store,
  limits: new KeyLimits(redis, env.REDIS_KEY_PREFIX, env.CONCURRENCY_LEASE_TTL_MS, env.CONCURRENCY_RELEASE_LINGER_MS),
  clientIp: new ClientIpResolver(env.TRUSTED_PROXY_CIDRS, env.CLIENT_IP_HEADER),
  emitAlone: loneEvents({ pool, relay }),
  logger,
  expiryNotices,
};
// The decoy hash for unknown emails is made now, so the first such sign-in costs no extra scrypt run.
await decoyHash();
if (env.BOOTSTRAP_ADMIN_EMAIL && env.BOOTSTRAP_ADMIN_PASSWORD) {
  await bootstrapPlatformAdmin({ ctx: identity, input: { email: env.BOOTSTRAP_ADMIN_EMAIL, password: env.BOOTSTRAP_ADMIN_PASSWORD }, logger });
}

const widgets = new WidgetSessions({
  conversations: services.conversations,
  tokens: { secret: env.WIDGET_JWT_SECRET, ttlSeconds: env.WIDGET_TOKEN_TTL_SECONDS },
  ttlMs: env.WIDGET_SESSION_CACHE_TTL_MS,
  broadcast: new Broadcast<WidgetSessionInvalidation>(nats, subjects.broadcast(WIDGET_SESSIONS_BROADCAST), logger),
  limiter: widgetRateLimiter(redis, env.REDIS_KEY_PREFIX, env.WIDGET_RATE_LIMIT_PER_MINUTE),
});
widgets.listen();

const deps: EdgeDeps = { env, logger, registry, db: { prisma, transact }, identity, keys, services, widgets, databaseUp: infra.databaseUp, openapi: {} };
const inFlight = new InFlight();
const app = createApp({
  deps,
  routes,
  auth: { sessions, widgets, keys: (req, presented, requirement) => authenticateKey(keys, req, presented, requirement) },
  inFlight,
  ...(env.CONSOLE_UI ? { consoleDir: CONSOLE_DIST_DIR } : {}),
});
const server = createAppServer(app, { keepAliveTimeout: 65_000, headersTimeout: 66_000 });
server.on("clientError", clientErrorHandler(logger));
await new Promise<void>((resolve, reject) => {
  server.once("error", reject);
  server.listen(env.PORT, env.HOST, () => resolve());
});
const address = server.address();
logger.info({ url: `http://${env.HOST}:${typeof address === "object" && address ? address.port : env.PORT}` }, "edge listening");

expiryNotices.start();
shutdown.addFirst("key expiry notices", () => expiryNotices.stop());

// Stop taking requests and drain them first; then the gRPC channels they used.
shutdown.addFirst("grpc clients", async () => closeServices(services));
shutdown.addFirst("http server", () => drainHttp(server, inFlight, env.SHUTDOWN_TIMEOUT_MS));
