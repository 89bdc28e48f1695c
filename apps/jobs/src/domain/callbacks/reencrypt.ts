import { resealRows, type ResealResult } from "@gateway/secrets";
import type { JobsContext } from "../context.js";
import { callbackSecretContext, sealedIn, secretColumns } from "../../callbacks/target.js";

/**
 * Key rotation, last step, for jobs (docs/decisions/0104): every callback secret is
 * sealed again under the current key of ENCRYPTION_KEYS, so older keys can be removed.
 * Each row is replaced only if it still holds what was read.
 */
export async function reencryptCallbackSecrets(ctx: Pick<JobsContext, "prisma" | "keyring" | "logger">): Promise<ResealResult> {
  const rows = await ctx.prisma.jobCallbackTarget.findMany({ select: { jobId: true, secretCiphertext: true, secretKeyId: true }, orderBy: { jobId: "asc" } });
  return resealRows(
    ctx.keyring,
    ctx.logger,
    "job_callback",
    rows.map((r) => ({ id: r.jobId, ...sealedIn(r) })),
    (row) => callbackSecretContext(row.id),
    async (row, sealed) =>
      (
        await ctx.prisma.jobCallbackTarget.updateMany({
          where: { jobId: row.id, ...secretColumns(row) },
          data: secretColumns(sealed),
        })
      ).count === 1,
  );
}
