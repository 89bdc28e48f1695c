import { AppError } from "@gateway/errors";
import type { Request } from "express";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The x-filename header as text. Node reads header bytes as latin1, so a name
 * sent as raw UTF-8 is re-read as UTF-8 when it is valid UTF-8;
 * `UTF-8''<percent-encoded>` (RFC 8187) is decoded. Whether the name is
 * acceptable is the files service's decision.
 */
export function filenameHeader(req: Request): string {
  const raw = req.headers["x-filename"];
  if (raw === undefined) return "";
  if (Array.isArray(raw)) throw new AppError("invalid_request", "x-filename must be sent once.");
  const ext = /^utf-8''(.*)$/i.exec(raw);
  if (ext) {
    try {
      return decodeURIComponent(ext[1]!);
    } catch {
      throw new AppError("invalid_request", "x-filename: UTF-8'' must be followed by valid percent-encoded UTF-8.");
    }
  }
  try {
    return utf8.decode(Buffer.from(raw, "latin1"));
  } catch {
    return raw;
  }
}

/** A whole-number header, at least 1, or 0 when absent; anything else is a 400 naming the header. */
export function countHeader(req: Request, name: "x-expires-in" | "x-max-downloads", what: string): number {
  const raw = req.headers[name];
  if (raw === undefined) return 0;
  const value = typeof raw === "string" ? raw.trim() : "";
  if (!/^\d{1,10}$/.test(value) || Number(value) < 1 || Number(value) > 2_147_483_647) {
    throw new AppError("invalid_request", `${name} must be ${what}.`);
  }
  return Number(value);
}

/** Content-Length as declared, or -1 for a body without one (chunked). */
export function declaredSize(req: Request): number {
  const raw = req.headers["content-length"];
  return raw === undefined ? -1 : Number(raw);
}
