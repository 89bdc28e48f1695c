import { z } from "zod";

/** What the file routes share: a file as its owner sees it, and the token of a link. */

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

export const TokenParams = z.object({ token: z.string().max(256) });
export type TokenParams = z.infer<typeof TokenParams>;
