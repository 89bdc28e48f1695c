import { filesV1 } from "@gateway/protos";
import { serviceBasics, startGrpcService } from "@gateway/runtime";
import { createPrisma } from "./db.js";
import type { Tx } from "./domain/context.js";
import { FilesEnv, loadEnv } from "./env.js";
import { filesHandlers } from "./grpc/files.js";
import { createStore } from "./storage/create.js";
import { startSweeper } from "./sweeper.js";

const env = loadEnv(process.env);
const store = createStore(env);
const limits = {
  maxBytes: env.FILES_MAX_BYTES,
  defaultTtlSeconds: env.FILES_DEFAULT_TTL_SECONDS,
  maxTtlSeconds: env.FILES_MAX_TTL_SECONDS,
  tenantBytesQuota: env.TENANT_STORAGE_BYTES_QUOTA,
  tenantFilesQuota: env.TENANT_FILES_QUOTA,
};
await startGrpcService<Tx, ReturnType<typeof createPrisma>>({
  ...serviceBasics("files", FilesEnv, env, import.meta.url),
  createPrisma,
  serviceNames: [filesV1.serviceName],
  register: (server, { prisma, transact, logger, shutdown }) => {
    const ctx = { prisma, transact, store, limits, logger };
    server.add(filesV1, filesHandlers(ctx));
    const sweeper = startSweeper(ctx, {
      intervalMs: env.FILES_SWEEP_INTERVAL_MS,
      batch: 50,
      exhaustedGraceSeconds: env.FILES_EXHAUSTED_GRACE_SECONDS,
      staleUploadSeconds: env.FILES_STALE_UPLOAD_SECONDS,
      logger: logger.child({ component: "sweeper" }),
    });
    shutdown.addFirst("sweeper", () => sweeper.stop());
  },
});
