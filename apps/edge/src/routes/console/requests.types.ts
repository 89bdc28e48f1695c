import { z } from "zod";
import { Id } from "@gateway/contract";
import { UsageRecord } from "../ops/ai/requests.types.js";

/** GET /console/requests/:request_id: what the gateway recorded about one request. */
export const RequestParams = z.object({ request_id: Id });
export type RequestParams = z.infer<typeof RequestParams>;

export const RequestViewResponse = z.object({
  data: z.object({
    request_id: z.string(),
    key: z.object({ id: z.string(), name: z.string(), prefix: z.string() }).nullable(),
    usage: UsageRecord.nullable(),
    audit: z.array(z.object({ event_id: z.string(), type: z.string(), source: z.string(), occurred_at: z.string(), data: z.record(z.string(), z.unknown()) })),
  }),
});
