import { fileURLToPath } from "node:url";
import { redactConfig } from "@gateway/config";
import { messagingV1 } from "@gateway/protos";
import { startGrpcService } from "@gateway/runtime";
import { createPrisma, type Tx } from "./db.js";
import { MessagingEnv, loadEnv } from "./env.js";
import { messagingHandlers } from "./grpc/messaging.js";

const env = loadEnv(process.env);
await startGrpcService<Tx, ReturnType<typeof createPrisma>>({
  service: "messaging",
  env,
  config: redactConfig(MessagingEnv, env),
  prismaDir: fileURLToPath(new URL("../prisma", import.meta.url)),
  createPrisma,
  serviceNames: [messagingV1.serviceName],
  register: (server, { prisma, transact }) => {
    server.add(messagingV1, messagingHandlers({ prisma, transact }));
  },
});
