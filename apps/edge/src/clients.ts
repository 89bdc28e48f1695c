import { CarriedCalls, createClient, readTls, type CallOptions, type Client } from "@gateway/grpc-kit";
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
    managedAi: carryInvocations(createClient(managedAiV1, env.MANAGED_AI_GRPC_URL, options("managed-ai")), env, registry),
    jobs: createClient(jobsV1, env.JOBS_GRPC_URL, options("jobs")),
    messaging: createClient(messagingV1, env.MESSAGING_GRPC_URL, options("messaging")),
    files: createClient(filesV1, env.FILES_GRPC_URL, options("files")),
    conversations: createClient(conversationsV1, env.MESSAGING_GRPC_URL, options("messaging")),
  };
}

export function closeServices(services: Services): void {
  for (const client of Object.values(services)) client.close();
}

/** The metered invocations, which go over managed-ai's Invocations stream (docs/decisions/0246). */
const CARRIED_UNARY = ["Invoke", "InvokeMessages", "Embed"] as const;
const CARRIED_STREAMS = ["InvokeStream", "InvokeMessagesStream"] as const;

/**
 * Managed-ai's client with its metered invocations carried as messages on one
 * long-lived stream per edge process instead of a gRPC call each (docs/decisions/0246):
 * the same deadlines, cancellation, errors and messages, a fraction of a call's CPU on
 * both sides. A managed-ai that does not know the stream yet (a rolling deploy) is
 * called a call each. Every other method is the plain client's.
 */
export function carryInvocations(client: Client<typeof managedAiV1>, env: EdgeEnv, registry: Registry): Client<typeof managedAiV1> {
  const carried = new CarriedCalls({
    open: () => client.Invocations() as unknown as ReturnType<ConstructorParameters<typeof CarriedCalls>[0]["open"]>,
    servicePath: `/${managedAiV1.serviceName}`,
    name: "managed-ai",
    deadlineMs: env.GRPC_DEADLINE_MS,
    streamDeadlineMs: 10 * 60_000,
    registry,
  });
  const close = () => {
    carried.close();
    client.close();
  };
  const wrapped: Client<typeof managedAiV1> = { ...client, close };
  for (const method of CARRIED_UNARY) {
    const plain = client[method];
    (wrapped as Record<string, unknown>)[method] = (request: unknown, call?: CallOptions) =>
      carried.unsupported ? plain(request as never, call) : carried.unary(method, request, call);
  }
  for (const method of CARRIED_STREAMS) {
    const plain = client[method];
    (wrapped as Record<string, unknown>)[method] = (request: unknown, call?: CallOptions) =>
      carried.unsupported ? plain(request as never, call) : carried.serverStream(method, request, call);
  }
  return wrapped;
}
