import { z } from "zod";

/** GET /v1/apps/socialops/providers: the inbound providers this deployment understands. */
export const ProvidersResponse = z.object({ data: z.array(z.object({ id: z.string(), name: z.string() })) });
