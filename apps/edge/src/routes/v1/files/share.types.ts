import { z } from "zod";

/** What anyone holding the link may see (no tenant, no id). */
export const ShareResponse = z.object({
  data: z.object({
    filename: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    content_type: z.string(),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    downloads_remaining: z.number().int().nullable().describe("null: unlimited."),
    download_url: z.string(),
  }),
});
