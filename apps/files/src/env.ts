import { z } from "zod";
import { loadEnv as load, serviceEnvShape } from "@gateway/config";

export const FilesEnv = z.object({
  ...serviceEnvShape({ service: "files", grpcPort: 50055, metricsPort: 9105 }),
});
export type FilesEnv = z.output<typeof FilesEnv>;

export function loadEnv(source: Record<string, string | undefined>): FilesEnv {
  return load(FilesEnv, source);
}
