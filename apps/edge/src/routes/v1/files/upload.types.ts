import { z } from "zod";
import { FileView } from "./files.types.js";

export const UploadResponse = z.object({
  data: FileView.pick({
    id: true,
    filename: true,
    size: true,
    sha256: true,
    expires_at: true,
    max_downloads: true,
    download_url: true,
    share_url: true,
  }).extend({
    content_type: z.string(),
    created_at: z.string(),
  }),
});

/**
 * The optional upload headers (spec 4.4), as sent; their values are read by
 * upload-headers.ts (encodings, whole numbers) and judged by the files service.
 */
export const UploadHeaders = z.object({
  "x-filename": z
    .string()
    .optional()
    .describe(
      "Display name, 1-255 characters, no / \\ or control characters (the bytes are stored by id, never by this name). UTF-8 as raw bytes, or RFC 8187 `UTF-8''<percent-encoded>`. Default `file`.",
    ),
  "x-expires-in": z
    .string()
    .optional()
    .describe("Lifetime in seconds from the end of the upload (whole number, at least 1; the service's default and maximum apply)."),
  "x-max-downloads": z.string().optional().describe("Downloads allowed (1-1000000); absent: unlimited."),
  "Content-Length": z.string().optional().describe("Optional (chunked bodies are counted); a body above the service's limit gets 413 either way."),
});
export type UploadHeaders = z.infer<typeof UploadHeaders>;
