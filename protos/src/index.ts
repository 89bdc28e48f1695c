import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ServiceDefinition, UntypedServiceImplementation } from "@grpc/grpc-js";

import type { FilesServiceDefinition, FilesServiceHandlers } from "./generated/gateway/files/v1/FilesService.js";
import type { JobsServiceDefinition, JobsServiceHandlers } from "./generated/gateway/jobs/v1/JobsService.js";
import type { LedgerServiceDefinition, LedgerServiceHandlers } from "./generated/gateway/ledger/v1/LedgerService.js";
import type { ManagedAiServiceDefinition, ManagedAiServiceHandlers } from "./generated/gateway/managed_ai/v1/ManagedAiService.js";
import type { MessagingServiceDefinition, MessagingServiceHandlers } from "./generated/gateway/messaging/v1/MessagingService.js";
import type { ConversationServiceDefinition, ConversationServiceHandlers } from "./generated/gateway/messaging/v1/ConversationService.js";
import type { HealthDefinition, HealthHandlers } from "./generated/grpc/health/v1/Health.js";

/** The package root: .proto files are resolved against it. */
export const PROTO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The loader options the types were generated with (see scripts/generate.mjs). */
export const LOADER_OPTIONS: protoLoader.Options = {
  ...(JSON.parse(readFileSync(new URL("../loader-options.json", import.meta.url), "utf8")) as protoLoader.Options),
  longs: String,
  enums: String,
  includeDirs: [PROTO_ROOT],
};

/**
 * One gRPC service contract: its full name (as used by the health service and
 * in paths), its .proto file, and, as phantom types, the generated definition
 * and handler shapes from which typed clients and servers are derived.
 */
export type Contract<Def extends ServiceDefinition, Handlers extends UntypedServiceImplementation> = {
  readonly serviceName: string;
  readonly file: string;
  /** Loads (once) and returns the service definition. */
  definition(): Def;
  readonly __types?: { def: Def; handlers: Handlers };
};

export type AnyContract = Contract<ServiceDefinition, UntypedServiceImplementation>;

function defineContract<Def extends ServiceDefinition, Handlers extends UntypedServiceImplementation>(
  serviceName: string,
  file: string,
): Contract<Def, Handlers> {
  let cached: Def | undefined;
  return {
    serviceName,
    file,
    definition() {
      if (!cached) {
        const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(file, LOADER_OPTIONS));
        let node: unknown = pkg;
        for (const part of serviceName.split(".")) node = (node as Record<string, unknown>)[part];
        const ctor = node as grpc.ServiceClientConstructor | undefined;
        if (!ctor?.service) throw new Error(`service ${serviceName} not found in ${file}`);
        cached = ctor.service as unknown as Def;
      }
      return cached;
    },
  };
}

export const healthV1 = defineContract<HealthDefinition, HealthHandlers>("grpc.health.v1.Health", "grpc/health/v1/health.proto");
export const ledgerV1 = defineContract<LedgerServiceDefinition, LedgerServiceHandlers>("gateway.ledger.v1.LedgerService", "gateway/ledger/v1/ledger.proto");
export const managedAiV1 = defineContract<ManagedAiServiceDefinition, ManagedAiServiceHandlers>(
  "gateway.managed_ai.v1.ManagedAiService",
  "gateway/managed_ai/v1/managed_ai.proto",
);
export const jobsV1 = defineContract<JobsServiceDefinition, JobsServiceHandlers>("gateway.jobs.v1.JobsService", "gateway/jobs/v1/jobs.proto");
export const messagingV1 = defineContract<MessagingServiceDefinition, MessagingServiceHandlers>(
  "gateway.messaging.v1.MessagingService",
  "gateway/messaging/v1/messaging.proto",
);
export const filesV1 = defineContract<FilesServiceDefinition, FilesServiceHandlers>("gateway.files.v1.FilesService", "gateway/files/v1/files.proto");

export const conversationsV1 = defineContract<ConversationServiceDefinition, ConversationServiceHandlers>(
  "gateway.messaging.v1.ConversationService",
  "gateway/messaging/v1/conversations.proto",
);

export type * as health from "./generated/grpc/health/v1/index.js";
export type * as ledger from "./generated/gateway/ledger/v1/index.js";
export type * as managedAi from "./generated/gateway/managed_ai/v1/index.js";
export type * as jobs from "./generated/gateway/jobs/v1/index.js";
export type * as messaging from "./generated/gateway/messaging/v1/index.js";
export type * as files from "./generated/gateway/files/v1/index.js";
