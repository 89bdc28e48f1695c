import { defineConfig } from "vitest/config";

// Domain tests run against real PostgreSQL (a database per file).
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
