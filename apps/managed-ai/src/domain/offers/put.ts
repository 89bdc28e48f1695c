import { z } from "zod";
import { newId } from "@gateway/contract/ids";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { Actor, assertVersion, concurrentWrite, ExpectedVersion, ResourceId } from "../schemas.js";
import { offerState } from "./view.js";

export const PutOfferInput = z.object({
  /** The caller has checked that the tenant exists: tenants live in the edge. */
  tenant_id: ResourceId,
  model_alias: ResourceId,
  discount_bps: z.number().int().min(0).max(10_000),
  /** Absent: keep (none on create); empty string: remove; else ISO 8601 UTC. */
  expires_at: z.union([z.literal(""), z.iso.datetime({ error: "expires_at must be an ISO 8601 UTC timestamp (…Z)" })]).optional(),
  version: ExpectedVersion,
  actor: Actor,
});
export type PutOfferInput = z.input<typeof PutOfferInput>;

export type PutOfferResult = { id: string; version: number };

/**
 * Creates or replaces the one offer of a (tenant, model): the same row, id
 * and history, with its version counting the writes. The model must exist (404
 * naming `model_alias`). The row is locked while it is compared and written, so
 * of two writes naming the same version exactly one succeeds; two first writes
 * race on the (tenant, model) key and the loser gets 409.
 */
export async function putOffer({ ctx, input }: { ctx: ManagedAiContext; input: PutOfferInput }): Promise<PutOfferResult> {
  const put = parseInput(PutOfferInput, input);
  const what = `the offer of tenant ${put.tenant_id} on model ${put.model_alias}`;
  const key = { tenantId: put.tenant_id, modelAlias: put.model_alias };
  return ctx.writeCatalog(async (tx, emit) => {
    if (!(await ctx.store.models.exists(put.model_alias, tx))) throw new AppError("not_found", `model_alias: no model ${put.model_alias}.`);
    await ctx.store.locks.offer(tx, put.tenant_id, put.model_alias);
    const before = await ctx.store.offers.get(tx, put.tenant_id, put.model_alias);
    assertVersion(put.version, before?.version, what);
    const expiresAt = put.expires_at === undefined ? undefined : put.expires_at === "" ? null : new Date(put.expires_at);

    const written = before
      ? await ctx.store.offers.update(tx, before.id, before.version, { discountBps: put.discount_bps, ...(expiresAt === undefined ? {} : { expiresAt }) })
      : await ctx.store.offers.create(tx, { id: newId("offer"), ...key, discountBps: put.discount_bps, expiresAt: expiresAt ?? null });
    if (!written) throw concurrentWrite(what);

    const after = await ctx.store.offers.get(tx, put.tenant_id, put.model_alias);
    if (!after) throw new Error(`${what} is gone within the transaction that wrote it`);
    await emit("managed_ai.offer_changed", {
      actor: put.actor,
      offer_id: after.id,
      tenant_id: after.tenantId,
      model_alias: after.modelAlias,
      change: before ? "updated" : "created",
      before: before ? offerState(before) : null,
      after: offerState(after),
    });
    return { id: after.id, version: after.version };
  });
}
