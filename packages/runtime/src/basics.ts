import { fileURLToPath } from "node:url";
import { redactConfig } from "@gateway/config";
import type { z } from "zod";

/**
 * What every service's `main.ts` hands `startGrpcService` first: its name, its environment
 * (parsed once, by the service's `loadEnv`), that environment redacted for the start-up log,
 * and its prisma directory, the sibling of the folder main runs from (`src/` or `dist/`).
 */
export function serviceBasics<S extends z.ZodObject>(service: string, schema: S, env: z.output<S>, mainUrl: string) {
  return { service, env, config: redactConfig(schema, env), prismaDir: fileURLToPath(new URL("../prisma", mainUrl)) };
}
