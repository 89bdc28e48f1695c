import { serviceTests } from "@gateway/testkit/vitest";
import { defineConfig } from "vitest/config";

// Domain tests run against real PostgreSQL (a database per file) and a local mock provider.
export default defineConfig({ test: serviceTests() });
