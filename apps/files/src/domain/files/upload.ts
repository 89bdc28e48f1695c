import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { AppError, isAppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { FilesContext } from "../context.js";
import type { File } from "../../generated/prisma/client.js";
import { bytesQuotaExceeded, chargeFile, filesQuotaReached, readQuota, type StorageQuota } from "../quota/usage.js";
import { planUpload, type UploadStart } from "./upload-input.js";

/** A new download/share token: 32 random bytes, base64url (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * Counts and hashes bytes on their way to the store, and fails the stream the
 * moment the count passes the size limit or the room left in the tenant's
 * quota when the upload began (whatever the client declared).
 */
async function* metered(body: AsyncIterable<Uint8Array>, maxBytes: number, quota: StorageQuota, tally: { size: number; hash: ReturnType<typeof createHash> }) {
  const room = quota.bytes_limit - quota.bytes_used;
  for await (const chunk of body) {
    tally.size += chunk.length;
    if (tally.size > maxBytes) {
      throw new AppError("payload_too_large", `The file is larger than the ${maxBytes} bytes accepted.`, { extra: { max_bytes: maxBytes } });
    }
    if (tally.size > room) throw bytesQuotaExceeded(quota);
    tally.hash.update(chunk);
    yield chunk;
  }
}

export type UploadFileArgs = {
  ctx: FilesContext;
  input: UploadStart;
  /** The file's bytes; ends normally only when the client's body was complete. */
  body: AsyncIterable<Uint8Array>;
  /** Aborted when the caller goes away. */
  signal?: AbortSignal;
};

/**
 * Streams an upload into the store and makes it downloadable, within the
 * tenant's storage quota (checked before the first byte, while the bytes
 * count, and exactly in the transaction that makes the file ready). A record in
 * state `uploading` (invisible) exists while bytes arrive, so a crash leaves
 * something the sweeper can find; any failure (too large, body cut short,
 * caller gone) removes the bytes and the record: an aborted upload leaves nothing.
 */
export async function uploadFile({ ctx, input, body, signal }: UploadFileArgs): Promise<File> {
  const plan = planUpload(input, ctx.limits);
  // Refused before any byte is stored when it cannot fit now; the commit below is what makes the quota exact.
  const quota = await readQuota(ctx.prisma, plan.tenantId, ctx.limits);
  if (quota.files_used >= quota.files_limit) throw filesQuotaReached(quota);
  if (quota.bytes_used + Math.max(0, plan.declaredSize) > quota.bytes_limit) throw bytesQuotaExceeded(quota);
  const id = newId("file");
  await ctx.prisma.file.create({
    data: {
      id,
      tenantId: plan.tenantId,
      filename: plan.filename,
      size: 0n,
      sha256: "",
      state: "uploading",
      contentType: plan.contentType,
      maxDownloads: plan.maxDownloads,
      token: newToken(),
    },
  });
  const tally = { size: 0, hash: createHash("sha256") };
  try {
    const source = Readable.from(metered(body, ctx.limits.maxBytes, quota, tally), { objectMode: false });
    await ctx.store.put(id, source, signal);
    if (signal?.aborted) throw new AppError("invalid_request", "The upload was aborted.");
    const sha256 = tally.hash.digest("hex");
    return await ctx.transact(async (tx, emit) => {
      const updated = await tx.$executeRawUnsafe(
        // A file joins its tenant's list when it is complete: its time and list position are then.
        `UPDATE files SET state = 'ready', size = $2, sha256 = $3, created_at = now(), seq = nextval(pg_get_serial_sequence('files', 'seq')),
             expires_at = now() + make_interval(secs => $4)
          WHERE id = $1 AND state = 'uploading'`,
        id,
        BigInt(tally.size),
        sha256,
        plan.ttlSeconds,
      );
      if (updated !== 1) throw new AppError("conflict", "The upload was abandoned before it completed.");
      await chargeFile(tx, plan.tenantId, BigInt(tally.size), ctx.limits);
      const file = await tx.file.findUniqueOrThrow({ where: { id } });
      await emit("file.uploaded", {
        file_id: id,
        tenant_id: file.tenantId,
        size: file.size.toString(),
        sha256,
        expires_at: file.expiresAt?.toISOString() ?? null,
        max_downloads: file.maxDownloads,
      });
      return file;
    });
  } catch (err) {
    await discard(ctx, id);
    if (isAppError(err)) throw err;
    if (signal?.aborted) throw new AppError("invalid_request", "The upload was aborted.", { cause: err });
    throw err;
  }
}

/** Removes whatever an unfinished upload left; failures are logged and left to the sweeper. */
async function discard(ctx: FilesContext, id: string): Promise<void> {
  try {
    await ctx.store.delete(id);
    await ctx.prisma.file.deleteMany({ where: { id, state: "uploading" } });
  } catch (err) {
    ctx.logger.warn({ err, file_id: id }, "an unfinished upload could not be cleaned up; the sweeper will");
  }
}
