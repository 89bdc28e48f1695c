import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { sealCredential, upstreamKeyContext } from "../credentials.js";
import { Actor, assertVersion, concurrentWrite, ExpectedVersion, ResourceId } from "../schemas.js";
import { upstreamState, upstreamView } from "./view.js";

/** Base URLs of OpenAI-compatible APIs, e.g. `https://api.openai.com/v1`; stored without trailing slashes. */
export const BaseUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password && !url.search && !url.hash;
    } catch {
      return false;
    }
  }, "must be an http(s) URL without credentials, query or fragment")
  .transform((value) => value.replace(/\/+$/, ""));

/** A provider API key: printable ASCII without spaces (it travels in an Authorization header). */
export const ApiKey = z.string().regex(/^[\x21-\x7e]{1,4096}$/, "must be 1-4096 printable ASCII characters without spaces");

export const PutUpstreamInput = z.object({
  id: ResourceId,
  provider: z.string().pipe(z.literal("openai", { error: 'provider must be "openai" (any OpenAI-compatible API)' })),
  base_url: BaseUrl,
  api_key: ApiKey.optional(),
  enabled: z.boolean().optional(),
  version: ExpectedVersion,
  actor: Actor,
});
export type PutUpstreamInput = z.input<typeof PutUpstreamInput>;

export type PutUpstreamResult = { id: string; version: number; keyConfigured: boolean };

/**
 * Creates or updates an upstream. A sent `api_key` is sealed with the current
 * encryption key and replaces the stored one (rotation); without it the stored
 * key stays. The row is locked while it is compared and written, so of two
 * writes naming the same version exactly one succeeds.
 */
export async function putUpstream({ ctx, input }: { ctx: ManagedAiContext; input: PutUpstreamInput }): Promise<PutUpstreamResult> {
  const put = parseInput(PutUpstreamInput, input);
  const what = `upstream ${put.id}`;
  return ctx.writeCatalog(async (tx, emit) => {
    await ctx.store.locks.upstream(tx, put.id);
    const before = await ctx.store.upstreams.get(tx, put.id);
    assertVersion(put.version, before?.version, what);
    const sealed = put.api_key === undefined ? undefined : sealCredential(ctx.keyring, put.api_key, upstreamKeyContext(put.id));
    const key = sealed ? { key: { apiKeyCiphertext: sealed.ciphertext, apiKeyKeyId: sealed.keyId } } : {};
    const write = { provider: put.provider, baseUrl: put.base_url, enabled: put.enabled ?? before?.enabled ?? true, ...key };
    if (!(await (before ? ctx.store.upstreams.update(tx, put.id, before.version, write) : ctx.store.upstreams.create(tx, put.id, write)))) {
      throw concurrentWrite(what);
    }

    const written = await ctx.store.upstreams.get(tx, put.id);
    if (!written) throw new Error(`${what} is gone within the transaction that wrote it`);
    const after = upstreamView(written);
    await emit("managed_ai.upstream_changed", {
      actor: put.actor,
      upstream_id: put.id,
      change: before ? "updated" : "created",
      key_rotated: sealed !== undefined,
      before: before ? upstreamState(upstreamView(before)) : null,
      after: upstreamState(after),
    });
    return { id: after.id, version: after.version, keyConfigured: after.keyConfigured };
  });
}
