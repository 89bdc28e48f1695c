import { z } from "zod";
import { listPageQuery } from "@gateway/contract";
import { NextCursor } from "../../page.js";

/** A file as its owner sees it (upload answer and listings). */
export const FileView = z.object({
  id: z.string(),
  filename: z.string(),
  size: z.number().int(),
  sha256: z.string().describe("Hex SHA-256 of the bytes, computed while they streamed in."),
  content_type: z.string(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  max_downloads: z.number().int().nullable().describe("null: unlimited."),
  downloads: z.number().int(),
  status: z.enum(["available", "expired", "exhausted"]),
  download_url: z.string().nullable().describe("Public, unguessable; null once the file is removed."),
  share_url: z.string().nullable(),
});

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

export const FileListQuery = z.object(listPageQuery({ item: "files", fallback: "the newest 100" }));
export type FileListQuery = z.infer<typeof FileListQuery>;
export const FileListResponse = z.object({ data: z.array(FileView), next_cursor: NextCursor });

export const TokenParams = z.object({ token: z.string().max(256) });
export type TokenParams = z.infer<typeof TokenParams>;

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
