import type { Request, Response } from "express";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute, type Method } from "../../../http/route.js";
import { baseUrl, fileView } from "./file-urls.js";
import { UploadHeaders, UploadResponse } from "./upload.types.js";
import { QuotaErrorBody } from "./quota.types.js";
import { countHeader, declaredSize, filenameHeader } from "./upload-headers.js";

/**
 * Streams the request body to the files service as it arrives: one gRPC
 * client-streaming call, each chunk written only when the previous one was
 * taken (flow control reaches back to the client's socket), so memory stays
 * flat whatever the size. The service counts, hashes and limits the bytes.
 * A client that goes away cancels the call (nothing is kept); a refusal that
 * comes while the body is still arriving (413, 400) is answered once the rest
 * of the body was dropped, within bounds (see `discardRest`).
 */
async function streamUpload(deps: EdgeDeps, req: Request, res: Response, tenantId: string) {
  const start = {
    tenant_id: tenantId,
    filename: filenameHeader(req),
    expires_in_seconds: countHeader(req, "x-expires-in", "a whole number of seconds, at least 1"),
    max_downloads: countHeader(req, "x-max-downloads", "a whole number, at least 1"),
    declared_size: declaredSize(req),
    content_type: req.headers["content-type"] ?? "",
  };
  const cancel = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) cancel.abort();
  };
  res.once("close", onClose);
  req.on("error", () => undefined);
  res.on("error", () => undefined);
  const upload = deps.services.files.UploadFile({ deadlineMs: deps.env.FILES_TRANSFER_DEADLINE_MS, signal: cancel.signal });
  const body = req.iterator({ destroyOnReturn: false });
  try {
    await upload.write({ start });
    let size = 0;
    for (let next = await body.next(); !next.done; next = await body.next()) {
      const chunk = next.value as Buffer;
      size += chunk.length;
      await upload.write({ chunk });
    }
    await upload.write({ end: { size } });
    const result = await upload.end();
    return result.file!;
  } catch (err) {
    upload.cancel();
    if (!cancel.signal.aborted && !req.complete) await discardRest(body, res);
    throw err;
  } finally {
    res.off("close", onClose);
  }
}

/** How much of a refused upload's body is read and dropped so the client can read the answer. */
const DISCARD_MAX_BYTES = 256 * 1_048_576;
const DISCARD_MAX_MS = 10_000;

/**
 * Refused part-way (413, 400): most clients read the answer only once they have
 * sent their body, and a connection closed under them fails with EPIPE or a
 * reset instead. So the rest of the body is read and dropped first, like a web
 * server's lingering close, within bounds; past them the answer goes out with
 * `Connection: close` and the connection ends.
 */
async function discardRest(body: AsyncIterator<unknown>, res: Response): Promise<void> {
  let dropped = 0;
  const until = Date.now() + DISCARD_MAX_MS;
  try {
    for (let next = await body.next(); !next.done; next = await body.next()) {
      dropped += (next.value as Buffer).length;
      if (dropped > DISCARD_MAX_BYTES || Date.now() > until) {
        res.setHeader("Connection", "close");
        return;
      }
    }
  } catch {
    // The client went away while its body was dropped: nobody to answer.
  }
}

function uploadRoute(method: Method, summary: string) {
  return defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, undefined, UploadHeaders>({
    method,
    path: "/v1/apps/file/upload",
    summary,
    tags: ["files"],
    access: { kind: "apiKey", scope: "file:write" },
    rawBody: { contentType: "application/octet-stream", description: "The file's bytes, raw (any Content-Type; it is stored as the file's type)." },
    headers: UploadHeaders,
    responses: {
      201: { description: "stored", schema: UploadResponse },
      400: { description: "a header is invalid (named in the message)" },
      409: { description: "the tenant's file-count quota is reached; nothing is kept", schema: QuotaErrorBody },
      413: {
        description:
          "larger than the service accepts (`max_bytes`) or than what is left of the tenant's byte quota (`quota`), declared or counted; nothing is kept",
        schema: QuotaErrorBody,
      },
    },
    async handler({ deps, req, res, principal }) {
      const file = await streamUpload(deps, req, res, keyPrincipal(principal).tenantId);
      const v = fileView(file, baseUrl(req, deps.env.PUBLIC_URL));
      return {
        status: 201,
        body: {
          data: {
            id: v.id,
            filename: v.filename,
            size: v.size,
            sha256: v.sha256,
            content_type: v.content_type,
            created_at: v.created_at,
            expires_at: v.expires_at,
            max_downloads: v.max_downloads,
            download_url: v.download_url,
            share_url: v.share_url,
          },
        },
      };
    },
  });
}

export const putFileUpload = uploadRoute("put", "Upload a file: the raw body, streamed (scope file:write).");
export const postFileUpload = uploadRoute("post", "Upload a file (POST, for legacy clients; same as PUT).");
