/**
 * The vitest settings of a service's tests (`apps/<service>/vitest.config.ts`), which run
 * against the machine's real PostgreSQL (a database per file), NATS and, for gRPC tests, the
 * service's own process: generous timeouts for a busy shared machine. Test files run one at a
 * time unless `fileParallelism` says otherwise. Its own entry (`@gateway/testkit/vitest`), so
 * a config loads nothing else.
 */
export function serviceTests(options: { fileParallelism?: boolean } = {}) {
  return { include: ["src/**/*.test.ts"], fileParallelism: options.fileParallelism ?? false, testTimeout: 60_000, hookTimeout: 120_000 };
}
