import { z } from "zod";
import { loadEnv as load, serviceEnvShape } from "@gateway/config";

export const MessagingEnv = z.object({
  ...serviceEnvShape({ service: "messaging", grpcPort: 50054, metricsPort: 9104 }),
});
export type MessagingEnv = z.output<typeof MessagingEnv>;

export function loadEnv(source: Record<string, string | undefined>): MessagingEnv {
  return load(MessagingEnv, source);
}
