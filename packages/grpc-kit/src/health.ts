import * as grpc from "@grpc/grpc-js";
import type { health } from "@gateway/protos";

export type ServingStatus = "SERVING" | "NOT_SERVING";
type Watcher = (status: health.HealthCheckResponse["status"]) => void;

/** grpc.health.v1.Health: Check and Watch over a map of service name → status. */
export class HealthService {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Map<string, Set<Watcher>>();
  private readonly streams = new Set<grpc.ServerWritableStream<unknown, unknown>>();
  /**
   * Runs before a Check is answered, to bring the statuses up to date (the runtime's
   * database check, when its last answer is older than a few seconds); a failure of it
   * leaves the statuses as they are.
   */
  beforeCheck: (() => Promise<void>) | undefined;

  set(service: string, status: ServingStatus): void {
    this.statuses.set(service, status);
    for (const watcher of this.watchers.get(service) ?? []) watcher(status);
  }

  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Ends open Watch streams so a graceful shutdown is not held up by them. */
  close(): void {
    for (const stream of this.streams) stream.end();
    this.streams.clear();
  }

  handlers(): grpc.UntypedServiceImplementation {
    const answer: grpc.handleUnaryCall<health.HealthCheckRequest__Output, health.HealthCheckResponse> = (call, callback) => {
      const status = this.statuses.get(call.request.service);
      if (status === undefined) callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${call.request.service}` });
      else callback(null, { status });
    };
    const check: grpc.handleUnaryCall<health.HealthCheckRequest__Output, health.HealthCheckResponse> = (call, callback) => {
      if (!this.beforeCheck) return answer(call, callback);
      void this.beforeCheck().then(
        () => answer(call, callback),
        () => answer(call, callback),
      );
    };
    const watch: grpc.handleServerStreamingCall<health.HealthCheckRequest__Output, health.HealthCheckResponse> = (call) => {
      const service = call.request.service;
      const send: Watcher = (status) => call.write({ status });
      send(this.statuses.get(service) ?? "SERVICE_UNKNOWN");
      let set = this.watchers.get(service);
      if (!set) {
        set = new Set();
        this.watchers.set(service, set);
      }
      set.add(send);
      this.streams.add(call as grpc.ServerWritableStream<unknown, unknown>);
      call.on("cancelled", () => {
        set.delete(send);
        this.streams.delete(call as grpc.ServerWritableStream<unknown, unknown>);
      });
    };
    return { Check: check, Watch: watch };
  }
}
