import { z } from "zod";
import { loadEnv as load, serviceEnvShape } from "@gateway/config";

export const JobsEnv = z.object({
  ...serviceEnvShape({ service: "jobs", grpcPort: 50053, metricsPort: 9103 }),
});
export type JobsEnv = z.output<typeof JobsEnv>;

export function loadEnv(source: Record<string, string | undefined>): JobsEnv {
  return load(JobsEnv, source);
}
