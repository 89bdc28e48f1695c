import { fileURLToPath } from "node:url";
import { redactConfig } from "@gateway/config";
import { jobsV1 } from "@gateway/protos";
import { startGrpcService } from "@gateway/runtime";
import { createPrisma, type Tx } from "./db.js";
import { recordAuditEvents } from "./domain/audit/record.js";
import { JobsEnv, loadEnv } from "./env.js";
import { jobsHandlers } from "./grpc/jobs.js";

const env = loadEnv(process.env);
await startGrpcService<Tx, ReturnType<typeof createPrisma>>({
  service: "jobs",
  env,
  config: redactConfig(JobsEnv, env),
  prismaDir: fileURLToPath(new URL("../prisma", import.meta.url)),
  createPrisma,
  serviceNames: [jobsV1.serviceName],
  register: async (server, { prisma, transact, consume }) => {
    server.add(jobsV1, jobsHandlers({ prisma, transact }));
    // Every event of every service, once, into the audit trail.
    await consume("jobs-audit-trail", [], (events, tx) => recordAuditEvents({ tx, events }));
  },
});
