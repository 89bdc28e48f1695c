import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { CredentialError, openCredential, upstreamKeyContext } from "../credentials.js";
import { Actor, ResourceId } from "../schemas.js";

export const TestUpstreamInput = z.object({
  id: ResourceId,
  actor: Actor,
  /** The caller's deadline: the test gives up early enough to answer within it. */
  deadline: z.date().optional(),
});
export type TestUpstreamInput = z.input<typeof TestUpstreamInput>;

export type TestUpstreamResult = { reachable: boolean; authenticated: boolean; upstreamStatus: number | null };

/** Time kept back from the caller's deadline to answer (and audit) in time. */
const ANSWER_MARGIN_MS = 300;
const MIN_WAIT_MS = 50;

/**
 * Checks the provider's models listing, `GET {base_url}/models` with the stored
 * key as a Bearer token; no inference. Reachable means an HTTP answer came
 * (redirects are not followed, so a 3xx counts as an answer that did not
 * authenticate); authenticated means it was 2xx. No answer within the timeout,
 * or a refused connection, is unreachable: never a hang, never an error.
 */
export async function testUpstream({ ctx, input }: { ctx: ManagedAiContext; input: TestUpstreamInput }): Promise<TestUpstreamResult> {
  const { id, actor, deadline } = parseInput(TestUpstreamInput, input);
  const row = await ctx.store.upstreams.target(id);
  if (!row) throw new AppError("not_found", `No upstream ${id}.`);

  let apiKey: string | undefined;
  if (row.apiKeyCiphertext && row.apiKeyKeyId) {
    try {
      apiKey = openCredential(ctx.keyring, { ciphertext: row.apiKeyCiphertext, keyId: row.apiKeyKeyId }, upstreamKeyContext(id));
    } catch (err) {
      if (!(err instanceof CredentialError)) throw err;
      ctx.logger.error({ upstream_id: id, reason: err.message }, "upstream credential cannot be decrypted");
      throw new AppError("unavailable", "The upstream's credential cannot be decrypted with the configured ENCRYPTION_KEYS.");
    }
  }

  const budget = deadline ? deadline.getTime() - Date.now() - ANSWER_MARGIN_MS : Number.POSITIVE_INFINITY;
  const timeoutMs = Math.max(MIN_WAIT_MS, Math.min(ctx.upstreamTestTimeoutMs, budget));
  const result = await probe(ctx, `${row.baseUrl}/models`, apiKey, timeoutMs, id);

  await ctx.transact(async (_tx, emit) => {
    await emit("managed_ai.upstream_tested", {
      actor,
      upstream_id: id,
      reachable: result.reachable,
      authenticated: result.authenticated,
      upstream_status: result.upstreamStatus,
    });
  });
  return result;
}

async function probe(ctx: ManagedAiContext, url: string, apiKey: string | undefined, timeoutMs: number, upstreamId: string): Promise<TestUpstreamResult> {
  const started = Date.now();
  try {
    const res = await ctx.fetch(url, {
      method: "GET",
      headers: { accept: "application/json", ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }) },
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    ctx.logger.info({ upstream_id: upstreamId, status: res.status, duration_ms: Date.now() - started }, "upstream test answered");
    return { reachable: true, authenticated: res.status >= 200 && res.status < 300, upstreamStatus: res.status };
  } catch (err) {
    ctx.logger.info({ upstream_id: upstreamId, reason: failureReason(err), duration_ms: Date.now() - started }, "upstream test unreachable");
    return { reachable: false, authenticated: false, upstreamStatus: null };
  }
}

/** Why a request got no answer, as a short code (never the request itself). */
function failureReason(err: unknown): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string; name?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return "timeout";
  return e?.cause?.code ?? e?.code ?? e?.cause?.name ?? e?.name ?? "error";
}
