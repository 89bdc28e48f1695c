import { z } from "zod";
import { Id } from "@gateway/contract";
import { AppError, parseInput } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { AppContext } from "../app-context.js";
import type { AppInstance } from "../../generated/prisma/client.js";
import { PushConfigInput, SocialOpsConfigInput, storePushConfig, storeSocialOpsConfig, type StoredPushConfig, type StoredSocialOpsConfig } from "./config.js";

export const PutAppInstanceInput = z.object({
  actor: z.string().nullable(),
  tenant_id: Id,
  service_id: z.enum(["webhook-push", "socialops"]),
  alias: Id,
  status: z.enum(["active", "disabled"]),
  config: z.unknown(),
});

/** The config, or invalid_request naming the field under `config.`. */
function parseConfig<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  try {
    return parseInput(schema, value ?? {});
  } catch (err) {
    if (err instanceof AppError) throw new AppError(err.code, `config.${err.message}`);
    throw err;
  }
}

/**
 * Creates the tenant's webhook-push or socialops instance under `alias`, or
 * updates it (the same call with an existing alias): secrets are sealed before
 * they are stored, omitted ones kept, customer URLs checked against the egress
 * policy. The change and its event commit together.
 */
export async function putAppInstance({ ctx, input }: { ctx: AppContext; input: z.input<typeof PutAppInstanceInput> }): Promise<AppInstance> {
  const q = parseInput(PutAppInstanceInput, input);
  const key = { tenantId: q.tenant_id, serviceId: q.service_id, alias: q.alias };
  const existing = await ctx.prisma.appInstance.findUnique({ where: { tenantId_serviceId_alias: key } });
  const id = existing?.id ?? newId("inst");
  const config =
    q.service_id === "webhook-push"
      ? await storePushConfig(parseConfig(PushConfigInput, q.config), (existing?.config as StoredPushConfig | undefined) ?? null, id, ctx.keyring, ctx.egress)
      : await storeSocialOpsConfig(
          parseConfig(SocialOpsConfigInput, q.config),
          (existing?.config as StoredSocialOpsConfig | undefined) ?? null,
          id,
          ctx.keyring,
          ctx.egress,
        );

  return ctx.transact(async (tx, emit) => {
    let saved: AppInstance;
    if (existing) {
      const changed = await tx.appInstance.updateMany({
        where: { id, version: existing.version },
        data: { status: q.status, config: config as object, version: { increment: 1 } },
      });
      if (changed.count === 0) throw new AppError("conflict", "The instance changed while it was being updated; send the change again.");
      saved = await tx.appInstance.findUniqueOrThrow({ where: { id } });
    } else {
      saved = await tx.appInstance.create({ data: { id, ...key, status: q.status, config: config as object, version: 1 } });
    }
    await emit("messaging.instance_changed", {
      actor: q.actor,
      instance_id: saved.id,
      tenant_id: saved.tenantId,
      service_id: q.service_id,
      alias: saved.alias,
      change: existing ? "updated" : "created",
      status: saved.status,
      version: saved.version,
    });
    return saved;
  });
}
