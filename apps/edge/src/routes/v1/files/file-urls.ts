import type { Request } from "express";
import type { files } from "@gateway/protos";

const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** Where links point: PUBLIC_URL when configured, else the host the client called (checked), else a relative path. */
export function baseUrl(req: Request, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, "");
  const host = req.get("host");
  return host && HOST.test(host) ? `${req.protocol}://${host}` : "";
}

export const downloadPath = (token: string) => `/v1/apps/file/download/${token}`;
export const sharePath = (token: string) => `/v1/apps/file/share/${token}`;

/** What anyone who may see a file sees of it: its name, size, digest, type and dates. */
export function fileFacts(f: files.File__Output) {
  return {
    filename: f.filename,
    size: Number(f.size),
    sha256: f.sha256,
    content_type: f.content_type,
    created_at: f.created_at,
    expires_at: f.expires_at || null,
  };
}

/** A file as its owner sees it. */
export function fileView(f: files.File__Output, base: string) {
  return {
    id: f.id,
    ...fileFacts(f),
    max_downloads: f.max_downloads || null,
    downloads: f.downloads,
    status: f.status as "available" | "expired" | "exhausted",
    download_url: f.token && f.status === "available" ? `${base}${downloadPath(f.token)}` : null,
    share_url: f.token && f.status === "available" ? `${base}${sharePath(f.token)}` : null,
  };
}
