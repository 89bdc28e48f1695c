import type { Readable } from "node:stream";
import type { FilesContext } from "../context.js";
import type { File } from "../../generated/prisma/client.js";
import { AVAILABLE, checkToken, gone } from "./by-token.js";

export type DownloadFileInput = { token: string };

/**
 * Counts one download and opens the bytes. The count is one conditional
 * UPDATE: PostgreSQL's row lock makes concurrent downloads of a file queue on
 * it and re-check the condition, so with a limit of n exactly n of them get
 * the bytes. A download is counted when it starts (a client that gives up
 * part-way has used it), and its event is written in the same transaction.
 */
export async function downloadFile({ ctx, input }: { ctx: FilesContext; input: DownloadFileInput }): Promise<{ file: File; body: Readable }> {
  const token = checkToken(input.token);
  const file = await ctx.transact(async (tx, emit) => {
    const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
      `UPDATE files SET downloads = downloads + 1, last_download_at = now() WHERE token = $1 AND ${AVAILABLE} RETURNING id`,
      token,
    );
    if (rows.length === 0) return null;
    const claimed = await tx.file.findUniqueOrThrow({ where: { id: rows[0]!.id } });
    await emit("file.downloaded", { file_id: claimed.id, tenant_id: claimed.tenantId, downloads: claimed.downloads, max_downloads: claimed.maxDownloads });
    return claimed;
  });
  if (!file) throw gone();
  const { body } = await ctx.store.get(file.id);
  return { file, body };
}
