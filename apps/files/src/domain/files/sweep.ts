import type { FilesContext } from "../context.js";
import { releaseFiles } from "../quota/usage.js";

export type SweepFilesInput = {
  /** Files per transaction. */
  batch: number;
  /** An exhausted file stays this long after its last download began, so that download can finish. */
  exhaustedGraceSeconds: number;
  /** An upload still `uploading` after this long was abandoned by a process that died. */
  staleUploadSeconds: number;
};

export type SweepResult = { expired: number; exhausted: number; abandoned: number };

type Candidate = { id: string; tenant_id: string; size: bigint; reason: "expired" | "exhausted" | "abandoned" };

/**
 * Removes the bytes of expired and exhausted files, marks their records
 * `removed` (token cleared, event written, the tenant's storage usage given
 * back), and deletes abandoned uploads.
 * Rows are claimed with FOR UPDATE SKIP LOCKED, so replicas sweeping at the
 * same time take disjoint batches; a row whose transaction fails (store
 * unreachable) is simply taken again next time. Deleting bytes is idempotent.
 */
export async function sweepFiles({ ctx, input }: { ctx: FilesContext; input: SweepFilesInput }): Promise<SweepResult> {
  const result: SweepResult = { expired: 0, exhausted: 0, abandoned: 0 };
  for (;;) {
    const swept = await ctx.transact(async (tx, emit) => {
      const rows = await tx.$queryRawUnsafe<Candidate[]>(
        `SELECT id, tenant_id, size,
                CASE WHEN state = 'uploading' THEN 'abandoned'
                     WHEN expires_at IS NOT NULL AND expires_at <= now() THEN 'expired'
                     ELSE 'exhausted' END AS reason
           FROM files
          WHERE (state = 'ready' AND expires_at <= now())
             OR (state = 'ready' AND max_downloads IS NOT NULL AND downloads >= max_downloads
                 AND last_download_at <= now() - make_interval(secs => $2))
             OR (state = 'uploading' AND created_at <= now() - make_interval(secs => $3))
          ORDER BY created_at
          LIMIT $1
          FOR UPDATE SKIP LOCKED`,
        input.batch,
        input.exhaustedGraceSeconds,
        input.staleUploadSeconds,
      );
      const removed: Candidate[] = [];
      for (const row of rows) {
        await ctx.store.delete(row.id);
        if (row.reason === "abandoned") {
          await tx.file.delete({ where: { id: row.id } });
        } else {
          await tx.$executeRawUnsafe(
            `UPDATE files SET state = 'removed', removed_reason = $2, removed_at = now(), token = NULL WHERE id = $1`,
            row.id,
            row.reason,
          );
          await emit("file.removed", { file_id: row.id, tenant_id: row.tenant_id, reason: row.reason });
          removed.push(row);
        }
        result[row.reason]++;
      }
      // Abandoned uploads were never counted; removed files give their space back in this transaction.
      await releaseFiles(tx, removed);
      return rows.length;
    });
    if (swept < input.batch) return result;
  }
}
