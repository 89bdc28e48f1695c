import { Agent, request } from "undici";
import { checkUrl, guardedLookup, type EgressPolicy } from "./policy.js";

export type DeliveryRequest = {
  method?: "POST" | "PUT";
  body: string;
  headers: Record<string, string>;
  /** For the whole delivery, redirects included. */
  timeoutMs: number;
  policy: EgressPolicy;
  /** Redirects followed (each hop checked again); default 3. */
  maxRedirects?: number;
};

export type DeliveryResult = {
  /** A 2xx answer came within the timeout. */
  ok: boolean;
  /** The final HTTP status, or null when no answer came. */
  status: number | null;
  /** A short code (`http_500`, `timeout`, `private_address`, ...), null when ok. Never carries the URL. */
  error: string | null;
  /** The answer's body, cut at 64 KiB. */
  body?: string;
};

const MAX_BODY_BYTES = 64 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** One pooled agent per policy: connections are reused, and every new one is checked at connect time. */
const agents = new Map<string, Agent>();
export function guardedAgent(policy: EgressPolicy): Agent {
  const key = JSON.stringify([policy.allowPrivate, policy.allowHttpLoopback ?? false]);
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ connect: { lookup: guardedLookup(policy) }, keepAliveTimeout: 10_000 });
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the pooled agents (at shutdown). */
export async function closeAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.allSettled(all.map((agent) => agent.close()));
}

async function readCapped(body: AsyncIterable<Uint8Array> & { destroy(): void; on(e: "error", f: () => void): unknown }): Promise<string> {
  body.on("error", () => {}); // a body cut by the peer must never become an uncaught error
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(Buffer.from(chunk));
    size += chunk.byteLength;
    if (size >= MAX_BODY_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString("utf8");
}

function failure(error: unknown): string {
  const e = error as { name?: string; code?: string; cause?: { code?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError" || e?.code === "UND_ERR_HEADERS_TIMEOUT" || e?.code === "UND_ERR_BODY_TIMEOUT") return "timeout";
  const code = e?.code ?? e?.cause?.code;
  if (code === "EGRESS_REFUSED") return "private_address";
  return code ? `connection_failed:${code}` : "connection_failed";
}

/**
 * Sends a body to a customer-supplied URL. The URL and every redirect hop are
 * checked against the policy, and connections are made only to addresses the
 * policy allows (checked again at connect time). Never throws: the outcome is
 * in the result. `ok` means a 2xx answer within `timeoutMs`.
 */
export async function deliver(raw: string, req: DeliveryRequest): Promise<DeliveryResult> {
  const method = req.method ?? "POST";
  const signal = AbortSignal.timeout(req.timeoutMs);
  let current = raw;
  for (let hop = 0; ; hop++) {
    const check = await checkUrl(current, req.policy);
    if (!check.ok) return { ok: false, status: null, error: check.reason };
    try {
      const answer = await request(check.url, {
        method,
        body: req.body,
        headers: req.headers,
        dispatcher: guardedAgent(req.policy),
        signal,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      });
      const location = answer.headers.location;
      if (REDIRECTS.has(answer.statusCode) && typeof location === "string" && hop < (req.maxRedirects ?? 3)) {
        await readCapped(answer.body).catch(() => "");
        current = new URL(location, check.url).toString();
        continue;
      }
      const body = await readCapped(answer.body).catch(() => "");
      const ok = answer.statusCode >= 200 && answer.statusCode < 300;
      return { ok, status: answer.statusCode, error: ok ? null : `http_${answer.statusCode}`, body };
    } catch (error) {
      return { ok: false, status: null, error: failure(error) };
    }
  }
}
