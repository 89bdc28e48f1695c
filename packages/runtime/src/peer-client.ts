import { type Client, createClient, type GrpcTlsEnv, readTls } from "@gateway/grpc-kit";
import type { Registry } from "@gateway/metrics";

/** What a service's calls to another service take from its environment. */
export type PeerEnv = GrpcTlsEnv & { SERVICE_TOKEN: string };

/**
 * A gRPC client of another service of the mesh, as every service makes one: mutual TLS from
 * its GRPC_TLS_* files (docs/decisions/0230), its service token, a deadline per call, calls
 * timed in its registry under `name`.
 */
export function peerClient<C extends Parameters<typeof createClient>[0]>(
  contract: C,
  address: string,
  options: { name: string; deadlineMs: number; env: PeerEnv; registry: Registry },
): Client<C> {
  const { name, deadlineMs, env, registry } = options;
  return createClient(contract, address, { deadlineMs, name, registry, serviceToken: env.SERVICE_TOKEN, tls: readTls(env) });
}
