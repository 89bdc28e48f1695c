import { fileURLToPath } from "node:url";
import { redactConfig } from "@gateway/config";
import { filesV1 } from "@gateway/protos";
import { startGrpcService } from "@gateway/runtime";
import { createPrisma, type Tx } from "./db.js";
import { FilesEnv, loadEnv } from "./env.js";
import { filesHandlers } from "./grpc/files.js";

const env = loadEnv(process.env);
await startGrpcService<Tx, ReturnType<typeof createPrisma>>({
  service: "files",
  env,
  config: redactConfig(FilesEnv, env),
  prismaDir: fileURLToPath(new URL("../prisma", import.meta.url)),
  createPrisma,
  serviceNames: [filesV1.serviceName],
  register: (server, { prisma, transact }) => {
    server.add(filesV1, filesHandlers({ prisma, transact }));
  },
});
