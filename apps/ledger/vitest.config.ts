import { defineConfig } from "vitest/config";

// Integration tests against the machine's PostgreSQL (a fresh database per file)
// and, for the gRPC tests, a real ledger process: generous timeouts for a busy machine.
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
