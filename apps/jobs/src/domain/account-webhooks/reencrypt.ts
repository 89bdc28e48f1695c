import { resealRows, type ResealResult } from "@gateway/secrets";
import type { JobsContext } from "../context.js";
import { sealedIn, secretColumns } from "../../callbacks/target.js";
import { webhookSecretContext } from "./secret.js";

/** Key rotation, last step, for account webhook secrets (as callback secrets: each row replaced only if unchanged). */
export async function reencryptWebhookSecrets(ctx: Pick<JobsContext, "prisma" | "keyring" | "logger">): Promise<ResealResult> {
  const rows = await ctx.prisma.accountWebhook.findMany({ select: { id: true, secretCiphertext: true, secretKeyId: true }, orderBy: { id: "asc" } });
  return resealRows(
    ctx.keyring,
    ctx.logger,
    "account_webhook",
    rows.map((r) => ({ id: r.id, ...sealedIn(r) })),
    (row) => webhookSecretContext(row.id),
    async (row, sealed) =>
      (
        await ctx.prisma.accountWebhook.updateMany({
          where: { id: row.id, ...secretColumns(row) },
          data: secretColumns(sealed),
        })
      ).count === 1,
  );
}
