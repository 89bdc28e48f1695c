import { createClient, readTls, type Client } from "@gateway/grpc-kit";
import type { Registry } from "@gateway/metrics";
import { conversationsV1, filesV1, jobsV1, ledgerV1, managedAiV1, messagingV1 } from "@gateway/protos";
import type { EdgeEnv } from "./env.js";

export type Services = {
  ledger: Client<typeof ledgerV1>;
  managedAi: Client<typeof managedAiV1>;
  jobs: Client<typeof jobsV1>;
  messaging: Client<typeof messagingV1>;
  files: Client<typeof filesV1>;
  /** The bot, widget and conversation hub, served by the messaging process. */
  conversations: Client<typeof conversationsV1>;
};

/**
 * One channel per service, over mutual TLS when GRPC_TLS_* are set (docs/decisions/0230); every
 * call has a deadline and carries the request id and the service token.
 */
export function createServices(env: EdgeEnv, registry: Registry): Services {
  const tls = readTls(env);
  const options = (name: string) => ({ deadlineMs: env.GRPC_DEADLINE_MS, streamDeadlineMs: 10 * 60_000, name, registry, serviceToken: env.SERVICE_TOKEN, tls });
  return {
    ledger: createClient(ledgerV1, env.LEDGER_GRPC_URL, options("ledger")),
    managedAi: createClient(managedAiV1, env.MANAGED_AI_GRPC_URL, options("managed-ai")),
    jobs: createClient(jobsV1, env.JOBS_GRPC_URL, options("jobs")),
    messaging: createClient(messagingV1, env.MESSAGING_GRPC_URL, options("messaging")),
    files: createClient(filesV1, env.FILES_GRPC_URL, options("files")),
    conversations: createClient(conversationsV1, env.MESSAGING_GRPC_URL, options("messaging")),
  };
}

export function closeServices(services: Services): void {
  for (const client of Object.values(services)) client.close();
}
