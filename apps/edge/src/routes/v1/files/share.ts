import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { escapeHtml } from "./content-disposition.js";
import { baseUrl, downloadPath, fileFacts } from "./file-urls.js";
import { TokenParams } from "./files.types.js";
import { ShareResponse } from "./share.types.js";

function formatSize(bytes: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

function page(d: { filename: string; size: number; sha256: string; expires_at: string | null; downloads_remaining: number | null; href: string }): string {
  const rows = [
    ["Size", formatSize(d.size)],
    ["SHA-256", d.sha256],
    ["Expires", d.expires_at ?? "never"],
    ["Downloads left", d.downloads_remaining === null ? "unlimited" : String(d.downloads_remaining)],
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>${escapeHtml(d.filename)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}td{padding:.2rem .8rem .2rem 0;word-break:break-all}a.button{display:inline-block;margin-top:1rem;padding:.6rem 1.2rem;background:#1f6feb;color:#fff;border-radius:.4rem;text-decoration:none}</style>
</head><body>
<h1>${escapeHtml(d.filename)}</h1>
<table>${rows.map(([k, v]) => `<tr><td>${escapeHtml(k!)}</td><td>${escapeHtml(v!)}</td></tr>`).join("")}</table>
<a class="button" href="${escapeHtml(d.href)}" rel="nofollow noreferrer" download>Download</a>
</body></html>
`;
}

/**
 * `GET /v1/apps/file/share/{token}`: public metadata of a downloadable file,
 * as JSON, or a small page for a browser (Accept prefers text/html). Nothing
 * is counted; unknown, expired and exhausted answer 404 like the download.
 */
export const getFileShare = defineRoute<EdgeDeps, TokenParams>({
  method: "get",
  path: "/v1/apps/file/share/:token",
  summary: "A shared file's metadata by token (public; JSON, or an HTML page for browsers).",
  tags: ["files"],
  access: { kind: "public" },
  params: TokenParams,
  responses: {
    200: { description: "metadata (JSON), or a page when the client accepts text/html first", schema: ShareResponse },
    404: { description: "unknown, expired or download limit reached" },
  },
  async handler({ deps, req, res, params }) {
    const { file } = await deps.services.files.GetShare({ token: params.token });
    const f = file!;
    const path = downloadPath(f.token);
    const data = {
      ...fileFacts(f),
      downloads_remaining: f.max_downloads ? Math.max(0, f.max_downloads - f.downloads) : null,
      download_url: `${baseUrl(req, deps.env.PUBLIC_URL)}${path}`,
    };
    res.setHeader("Cache-Control", "private, no-store");
    res.setHeader("Referrer-Policy", "no-referrer");
    res.setHeader("Vary", "Accept");
    if (req.accepts(["application/json", "text/html"]) === "text/html") {
      res.setHeader("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
      res.setHeader("X-Content-Type-Options", "nosniff");
      res
        .status(200)
        .type("text/html; charset=utf-8")
        .send(page({ ...data, href: path }));
      return { written: true };
    }
    return { status: 200, body: { data } };
  },
});
