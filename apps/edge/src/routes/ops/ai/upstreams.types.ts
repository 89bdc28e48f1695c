import { z } from "zod";
import { Id } from "@gateway/contract";
import { ExpectedVersion, Timestamp } from "./common.types.js";

/** Request and response schemas of /ops/ai/upstreams (CONTRACT.md section 5). */

export const UpstreamParams = z.object({ id: Id });
export type UpstreamParams = z.infer<typeof UpstreamParams>;

export const PutUpstreamRequest = z.strictObject({
  provider: z.literal("openai").describe("Any OpenAI-compatible chat API."),
  base_url: z.string().min(1).max(2048).describe("http(s) base URL of the API, e.g. https://api.openai.com/v1 (no credentials, query or fragment)."),
  api_key: z
    .string()
    .regex(/^[\x21-\x7e]{1,4096}$/, "must be 1-4096 printable ASCII characters without spaces")
    .optional()
    .describe("Stored encrypted, never returned. Absent: keep the stored key; present: replace it (rotation)."),
  enabled: z.boolean().optional().describe("Default true on create; absent keeps the current value."),
  version: ExpectedVersion,
});
export type PutUpstreamRequest = z.infer<typeof PutUpstreamRequest>;

export const PutUpstreamResponse = z.object({ data: z.object({ id: z.string(), version: z.number().int(), key_configured: z.boolean() }) });

export const Upstream = z.object({
  id: z.string(),
  provider: z.string(),
  base_url: z.string(),
  enabled: z.boolean(),
  key_configured: z.boolean(),
  version: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const UpstreamsResponse = z.object({ data: z.array(Upstream).describe("Newest first, at most 200; never credentials.") });

export const TestUpstreamResponse = z.object({
  data: z.object({
    reachable: z.boolean().describe("An HTTP answer came from GET {base_url}/models."),
    authenticated: z.boolean().describe("The answer was 2xx."),
    upstream_status: z.number().int().nullable().describe("The answer's status; null when unreachable (refused, timed out)."),
  }),
});
