import { defineConfig } from "vitest/config";

// The fault suite (pnpm reliability --profile=ci|long): one stack per file, files in turn.
export default defineConfig({
  test: {
    include: ["reliability/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 300_000,
  },
});
