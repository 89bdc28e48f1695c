import type { File } from "../../generated/prisma/client.js";

export type FileStatus = "available" | "expired" | "exhausted";

/** What a file is to its owner now: downloadable, or why not. */
export function fileStatus(file: Pick<File, "state" | "removedReason" | "expiresAt" | "maxDownloads" | "downloads">, now = new Date()): FileStatus {
  if (file.state === "removed") return file.removedReason === "exhausted" ? "exhausted" : "expired";
  if (file.expiresAt && file.expiresAt <= now) return "expired";
  if (file.maxDownloads !== null && file.downloads >= file.maxDownloads) return "exhausted";
  return "available";
}
