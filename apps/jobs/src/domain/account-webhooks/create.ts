import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { Id } from "@gateway/contract";
import { newId } from "@gateway/contract/ids";
import { checkUrl } from "@gateway/outbound";
import type { JobsContext } from "../context.js";
import type { AccountWebhook } from "../../generated/prisma/client.js";
import { callbackPolicy, secretColumns } from "../../callbacks/target.js";
import { ACCOUNT_EVENTS } from "./notices.js";
import { newWebhookSecret, sealWebhookSecret } from "./secret.js";

/** A tenant's webhooks at most: each event fans out to every one of them. */
export const MAX_WEBHOOKS_PER_TENANT = 25;

export const CreateAccountWebhookInput = z.object({
  tenant_id: Id,
  url: z.string().min(1).max(2048),
  events: z
    .array(z.enum(ACCOUNT_EVENTS))
    .min(1)
    .max(ACCOUNT_EVENTS.length)
    .refine((e) => new Set(e).size === e.length, "must not repeat an event"),
  description: z.string().max(256).default(""),
  actor: z.string().default(""),
});
/** As a caller sends it: any strings, checked against the events there are. */
export type CreateAccountWebhookInput = Omit<z.input<typeof CreateAccountWebhookInput>, "events"> & { events: string[] };

/** Reasons of `checkUrl` that are about the URL's form rather than where it leads. */
const FORM_PROBLEMS: Record<string, string> = {
  invalid_url: "not a URL",
  unsupported_scheme: "not http(s)",
  https_required: "plain http",
  credentials_in_url: "credentials in the URL",
};

/**
 * The callback rules (CONTRACT.md sections 9 and 13): HTTPS, no credentials in the
 * URL, and no private, loopback or link-local address (checked now and again at
 * every delivery, pinned at connect). A name that does not resolve now is stored:
 * each delivery resolves it again.
 */
export async function checkWebhookUrl(ctx: Pick<JobsContext, "callbacks">, url: string): Promise<void> {
  const reached = await checkUrl(url, callbackPolicy(ctx.callbacks));
  if (!reached.ok && FORM_PROBLEMS[reached.reason]) throw new AppError("invalid_request", `url must be an HTTPS URL (${FORM_PROBLEMS[reached.reason]}).`);
  if (!reached.ok && reached.reason !== "dns_failed")
    throw new AppError("invalid_request", `url must not reach a private, loopback or link-local address (${reached.reason}).`);
}

/** Registers a webhook; its secret is answered once and kept sealed (docs/decisions/0210). */
export async function createAccountWebhook({
  ctx,
  input,
}: {
  ctx: JobsContext;
  input: CreateAccountWebhookInput;
}): Promise<{ webhook: AccountWebhook; secret: string }> {
  const q = parseInput(CreateAccountWebhookInput, input);
  await checkWebhookUrl(ctx, q.url);
  const id = newId("whk");
  const secret = newWebhookSecret();
  const sealed = sealWebhookSecret(ctx.keyring, id, secret);
  const webhook = await ctx.transact(async (tx, emit) => {
    const count = await tx.accountWebhook.count({ where: { tenantId: q.tenant_id } });
    if (count >= MAX_WEBHOOKS_PER_TENANT)
      throw new AppError("validation_failed", `A tenant has at most ${MAX_WEBHOOKS_PER_TENANT} webhooks; delete one first.`);
    const created = await tx.accountWebhook.create({
      data: {
        id,
        tenantId: q.tenant_id,
        url: q.url,
        events: q.events,
        description: q.description || null,
        ...secretColumns(sealed),
        createdBy: q.actor || null,
      },
    });
    await emit("account.webhook_created", { tenant_id: q.tenant_id, webhook_id: id, events: q.events, actor: q.actor || null });
    return created;
  });
  return { webhook, secret };
}
