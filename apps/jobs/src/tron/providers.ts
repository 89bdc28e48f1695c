import type { JobsEnv } from "../env.js";
import { ItrxEnergyProvider } from "./itrx.js";
import { HttpEnergyProvider, type EnergyProvider } from "./provider.js";

/** The one place the provider adapter is chosen (TRON_PROVIDER). */
export function createEnergyProvider(
  env: Pick<
    JobsEnv,
    "TRON_PROVIDER" | "TRON_PROVIDER_URL" | "TRON_PROVIDER_API_KEY" | "TRON_PROVIDER_API_SECRET" | "TRON_HTTP_TIMEOUT_MS" | "TRON_PROVIDER_MINIMUM_TTL_SECONDS"
  >,
): EnergyProvider {
  if (env.TRON_PROVIDER === "itrx") {
    // Sandbox mode never orders, so empty credentials are allowed there (env.ts requires them in live mode).
    return new ItrxEnergyProvider({
      baseUrl: env.TRON_PROVIDER_URL,
      apiKey: env.TRON_PROVIDER_API_KEY ?? "",
      apiSecret: env.TRON_PROVIDER_API_SECRET ?? "",
      timeoutMs: env.TRON_HTTP_TIMEOUT_MS,
      minimumTtlMs: env.TRON_PROVIDER_MINIMUM_TTL_SECONDS * 1000,
    });
  }
  return new HttpEnergyProvider({ baseUrl: env.TRON_PROVIDER_URL, apiKey: env.TRON_PROVIDER_API_KEY, timeoutMs: env.TRON_HTTP_TIMEOUT_MS });
}
