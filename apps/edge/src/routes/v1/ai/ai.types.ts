import { z } from "zod";
import { PathId } from "../../../http/units.js";

export const AliasParams = z.object({ alias: PathId });
export type AliasParams = z.infer<typeof AliasParams>;

/**
 * The body as documented (spec 2.5, OpenAI's chat shape). Validation happens in
 * managed-ai, which knows what managed models accept; unknown fields are
 * ignored, not rejected (CONTRACT.md section 1).
 */
export const ChatCompletionRequest = z
  .object({
    messages: z.array(z.object({ role: z.string(), content: z.unknown() }).loose()).min(1),
    model: z.string().optional().describe("Model alias; default: the instance's default_model."),
    max_tokens: z.number().int().optional(),
    max_cost: z.number().optional().describe("USD ceiling: a request whose worst-case cost is above it gets 409."),
    stream: z.boolean().optional(),
  })
  .loose();

export const ChatCompletionResponse = z.object({ id: z.string(), object: z.string(), model: z.string(), choices: z.array(z.unknown()), usage: z.unknown() }).loose();

export const ModelList = z.object({
  object: z.literal("list"),
  data: z.array(z.object({ id: z.string(), object: z.literal("model"), created: z.number().int(), owned_by: z.string() })),
});

export const COST_HEADERS = {
  "X-Service-Price-Version": "The applied price version's id.",
  "X-Service-Estimated-Cost": "The reservation, USD with four decimals.",
};
