import type { Response } from "express";
import { AppError } from "@gateway/errors";
import type { files } from "@gateway/protos";
import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { contentDisposition } from "./content-disposition.js";
import { TokenParams } from "./files.types.js";

/** Resolves when `res` can take more (or is gone): one listener pair at a time, never an accumulation. */
function writeChunk(res: Response, chunk: Buffer): Promise<void> {
  if (res.write(chunk)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

function fileHeaders(file: files.File__Output): Record<string, string> {
  return {
    "Content-Type": file.content_type || "application/octet-stream",
    "Content-Length": file.size,
    "Content-Disposition": contentDisposition(file.filename),
    "Repr-Digest": `sha-256=:${Buffer.from(file.sha256, "hex").toString("base64")}:`,
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "no-referrer",
  };
}

/**
 * `GET /v1/apps/file/download/{token}`: public, counted. The bytes flow from
 * the store through a server-streaming call to the socket with backpressure
 * all the way. A client that goes away cancels the call (the service closes
 * the file); a failure after the headers cuts the connection, so the client
 * sees a short body against Content-Length instead of a wrong file. HEAD
 * answers the headers without counting a download.
 */
export const getFileDownload = defineRoute<EdgeDeps, TokenParams>({
  method: "get",
  path: "/v1/apps/file/download/:token",
  summary: "Download a shared file by its token (public; counted; unknown, expired and exhausted answer 404).",
  tags: ["files"],
  access: { kind: "public" },
  params: TokenParams,
  responses: {
    200: {
      description: "the bytes",
      contentType: "application/octet-stream",
      headers: { "Content-Disposition": "attachment, with the name", "Repr-Digest": "SHA-256 of the bytes" },
    },
    404: { description: "unknown, expired or download limit reached" },
  },
  async handler({ deps, req, res, params }) {
    if (req.method === "HEAD") {
      const share = await deps.services.files.GetShare({ token: params.token });
      res.writeHead(200, fileHeaders(share.file!));
      res.end();
      return { written: true };
    }
    const cancel = new AbortController();
    res.on("error", () => undefined); // a write racing a disconnect must not crash the edge
    res.once("close", () => {
      if (!res.writableFinished) cancel.abort();
    });
    const stream = deps.services.files.DownloadFile({ token: params.token }, { deadlineMs: deps.env.FILES_TRANSFER_DEADLINE_MS, signal: cancel.signal });
    const messages = stream[Symbol.asyncIterator]();
    const first = await messages.next(); // not_found and the like are ordinary answers
    if (first.done || first.value.part !== "info" || !first.value.info) throw new AppError("internal_error", "The download did not start.");
    res.writeHead(200, fileHeaders(first.value.info));
    try {
      for (let next = await messages.next(); !next.done; next = await messages.next()) {
        if (cancel.signal.aborted) break;
        if (next.value.chunk) await writeChunk(res, next.value.chunk);
      }
      if (cancel.signal.aborted) stream.cancel();
      else res.end();
    } catch (err) {
      if (!cancel.signal.aborted) deps.logger.warn({ err }, "download failed after it started; connection cut");
      stream.cancel();
      res.destroy();
    }
    return { written: true };
  },
});
