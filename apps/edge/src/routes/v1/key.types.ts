import { z } from "zod";

/** GET /v1/key: the calling key, never its secret. */
export const KeySelfResponse = z.object({
  data: z.object({ id: z.string(), name: z.string(), prefix: z.string(), tenant_id: z.string(), scopes: z.array(z.string()) }),
});
