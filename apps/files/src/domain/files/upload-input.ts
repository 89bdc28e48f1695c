import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { Id } from "@gateway/contract";
import type { FilesLimits } from "../context.js";

/** Used when the client names no file. */
export const DEFAULT_FILENAME = "file";
export const DEFAULT_CONTENT_TYPE = "application/octet-stream";
export const MAX_DOWNLOADS_LIMIT = 1_000_000;

// C0 and C1 controls, DEL, and the bidirectional overrides that make a name read differently than it is.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

/**
 * A display name only: bytes are stored by id, so a name can never address a
 * path. Still refused: separators and dot names (a client that saves by this
 * name must not be led elsewhere), control characters (header and log
 * injection), bidi overrides (spoofed extensions), and surrounding spaces.
 */
export const Filename = z
  .string()
  .refine((v) => [...v].length >= 1 && [...v].length <= 255, "must be 1-255 characters")
  .refine((v) => !FORBIDDEN.test(v), "must not contain control or bidirectional-override characters")
  .refine((v) => !/[/\\]/.test(v), "must not contain / or \\")
  .refine((v) => v !== "." && v !== "..", "must not be . or ..")
  .refine((v) => v.trim() === v, "must not start or end with spaces");

// A media type `type/subtype` without parameters; anything else is stored as octet-stream.
const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,127}$/;

/** The media type to store for the client's Content-Type (form encodings mean "no type": curl sends one by default). */
export function mediaType(raw: string | undefined): string {
  const base = (raw ?? "").split(";")[0]!.trim().toLowerCase();
  if (!MEDIA_TYPE.test(base) || base === "application/x-www-form-urlencoded" || base.startsWith("multipart/")) return DEFAULT_CONTENT_TYPE;
  return base;
}

export const UploadStart = z.object({
  tenant_id: Id,
  filename: z.string(),
  expires_in_seconds: z.coerce.number().int(),
  max_downloads: z.number().int(),
  declared_size: z.coerce.number().int().min(-1),
  content_type: z.string(),
});
export type UploadStart = z.input<typeof UploadStart>;

export type UploadPlan = {
  tenantId: string;
  filename: string;
  ttlSeconds: number;
  maxDownloads: number | null;
  contentType: string;
  /** The client's Content-Length, or -1 when it sent none. */
  declaredSize: number;
};

/**
 * Checks an upload's parameters before any byte is stored: 400 naming the
 * header at fault, 413 when the declared size is already too large.
 */
export function planUpload(input: UploadStart, limits: FilesLimits): UploadPlan {
  const q = parseInput(UploadStart, input);
  if (q.declared_size > limits.maxBytes) {
    throw new AppError("payload_too_large", `The file is larger than the ${limits.maxBytes} bytes accepted.`, { extra: { max_bytes: limits.maxBytes } });
  }
  const name = q.filename === "" ? DEFAULT_FILENAME : q.filename;
  const checked = Filename.safeParse(name);
  if (!checked.success) throw new AppError("invalid_request", `x-filename ${checked.error.issues[0]?.message ?? "is invalid"}.`);
  const ttl = q.expires_in_seconds === 0 ? limits.defaultTtlSeconds : q.expires_in_seconds;
  if (ttl < 1 || ttl > limits.maxTtlSeconds) {
    throw new AppError("invalid_request", `x-expires-in must be a whole number of seconds from 1 to ${limits.maxTtlSeconds}.`);
  }
  if (q.max_downloads < 0 || q.max_downloads > MAX_DOWNLOADS_LIMIT) {
    throw new AppError("invalid_request", `x-max-downloads must be a whole number from 1 to ${MAX_DOWNLOADS_LIMIT}.`);
  }
  return {
    tenantId: q.tenant_id,
    filename: name,
    ttlSeconds: ttl,
    maxDownloads: q.max_downloads === 0 ? null : q.max_downloads,
    contentType: mediaType(q.content_type),
    declaredSize: q.declared_size,
  };
}
