import { serviceTests } from "@gateway/testkit/vitest";
import { defineConfig } from "vitest/config";

// Integration tests against the machine's PostgreSQL (a fresh database per file)
// and, for the gRPC tests, a real ledger process; files in parallel.
export default defineConfig({ test: serviceTests({ fileParallelism: true }) });
