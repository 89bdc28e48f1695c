import { AppError } from "@gateway/errors";
import type { Implementation } from "@gateway/grpc-kit";
import type { files, filesV1 } from "@gateway/protos";
import type { FilesContext } from "../domain/context.js";
import { downloadFile } from "../domain/files/download.js";
import { listFiles } from "../domain/files/list.js";
import { getShare } from "../domain/files/share.js";
import { fileStatus } from "../domain/files/status.js";
import { uploadFile } from "../domain/files/upload.js";
import { getQuota } from "../domain/quota/get.js";
import { updateQuota } from "../domain/quota/update.js";
import type { StorageQuota } from "../domain/quota/usage.js";
import type { File } from "../generated/prisma/client.js";

function encode(f: File): files.File {
  return {
    id: f.id,
    tenant_id: f.tenantId,
    filename: f.filename,
    size: f.size.toString(),
    sha256: f.sha256,
    created_at: f.createdAt.toISOString(),
    expires_at: f.expiresAt?.toISOString() ?? "",
    max_downloads: f.maxDownloads ?? 0,
    downloads: f.downloads,
    token: f.state === "removed" ? "" : (f.token ?? ""),
    content_type: f.contentType,
    status: fileStatus(f),
  };
}

function encodeQuota(q: StorageQuota): files.StorageQuota {
  return { bytes_limit: String(q.bytes_limit), bytes_used: String(q.bytes_used), files_limit: q.files_limit, files_used: q.files_used };
}

/**
 * The bytes of an upload call: every `chunk` until `end`. A call that stops
 * without `end` (the caller cancelled or failed) throws, so the upload is
 * discarded rather than stored short.
 */
async function* uploadBody(messages: AsyncIterator<files.UploadFileRequest__Output>): AsyncGenerator<Uint8Array> {
  for (;;) {
    const next = await messages.next();
    if (next.done) throw new AppError("invalid_request", "The upload ended before it was complete.");
    const m = next.value;
    if (m.part === "chunk" && m.chunk) yield m.chunk;
    else if (m.part === "end") return;
    else throw new AppError("invalid_request", "An upload sends start once, then chunks, then end.");
  }
}

/** Bytes per download message: small enough to interleave, large enough to be cheap. */
const CHUNK_BYTES = 64 * 1024;

export function filesHandlers(ctx: FilesContext): Implementation<typeof filesV1> {
  return {
    async ListFiles(req) {
      const page = await listFiles({ ctx, input: req });
      return { files: page.items.map(encode), next_cursor: page.nextCursor };
    },

    async UploadFile(requests, call) {
      const messages = requests[Symbol.asyncIterator]();
      const first = await messages.next();
      if (first.done || first.value.part !== "start" || !first.value.start) throw new AppError("invalid_request", "An upload begins with start.");
      const file = await uploadFile({ ctx, input: first.value.start, body: uploadBody(messages), signal: call.signal });
      return { file: encode(file) };
    },

    async DownloadFile(req, call, send) {
      const { file, body } = await downloadFile({ ctx, input: { token: req.token } });
      // However the call ends, the read stream is released (a client gone mid-download must not leak a file handle).
      body.on("error", () => undefined);
      const onCancel = () => body.destroy();
      call.signal.addEventListener("abort", onCancel, { once: true });
      try {
        await send({ info: encode(file) });
        let pending: Buffer[] = [];
        let pendingBytes = 0;
        for await (const chunk of body) {
          pending.push(chunk as Buffer);
          pendingBytes += (chunk as Buffer).length;
          if (pendingBytes >= CHUNK_BYTES) {
            await send({ chunk: pending.length === 1 ? pending[0]! : Buffer.concat(pending) });
            pending = [];
            pendingBytes = 0;
          }
        }
        if (pendingBytes > 0) await send({ chunk: Buffer.concat(pending) });
      } finally {
        call.signal.removeEventListener("abort", onCancel);
        body.destroy();
      }
    },

    async GetShare(req) {
      return { file: encode(await getShare({ ctx, input: { token: req.token } })) };
    },

    async GetQuota(req) {
      return encodeQuota(await getQuota({ ctx, input: { tenant_id: req.tenant_id } }));
    },

    async UpdateQuota(req) {
      return encodeQuota(await updateQuota({ ctx, input: { tenant_id: req.tenant_id, bytes_quota: req.bytes_quota, files_quota: req.files_quota } }));
    },
  };
}
