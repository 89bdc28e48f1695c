import { defineConfig } from "vitest/config";

// Each file boots its own stack (six processes); run files one at a time.
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
