import { lookup } from "node:dns/promises";
import { call, type Stack } from "@gateway/testkit";
import type { Customer } from "../../src/support/managed-ai.js";

/*
 * Every customer-supplied URL field, and how to send a URL through it. The
 * hostile-input suite fails when /openapi.json shows a URL-like field on a
 * customer route that is missing here, so each new one gets its case.
 *
 * `send` answers whether the URL was refused (a 4xx at write, or a delivery
 * attempt reported as not made) and what happened; the suite expects every
 * target below refused, no 5xx at write, and no request at the canary server
 * standing in for an internal service.
 */

export type SsrfContext = { stack: Stack; customer: Customer; operatorToken: string; pushKey: string; conversationKey: string; tronKey: string };

export type SsrfField = {
  method: string;
  /** As /openapi.json writes it, e.g. `/v1/apps/webhook-push/{alias}/send`. */
  path: string;
  /** Dotted path in the body, `[]` for array items, e.g. `config.targets[].url`. */
  field: string;
  send(ctx: SsrfContext, url: string): Promise<SsrfOutcome>;
};

/**
 * refused: a 4xx at write, or a delivery reported as not made. deferred: stored
 * because the name does not resolve now; every delivery checks it again with
 * DNS pinned at connect (@gateway/outbound), which the push case exercises.
 */
export type SsrfOutcome = { refused: boolean; deferred?: boolean; status: number; detail: string };

/** The host does not resolve from here (so a write-time check cannot judge it). */
async function unresolvable(url: string): Promise<boolean> {
  try {
    await lookup(new URL(url).hostname.replace(/^\[|\]$/g, ""), { all: true });
    return false;
  } catch {
    return true;
  }
}

let n = 0;
const alias = (kind: string) => `ssrf-${kind}-${++n}`;
const refusedAtWrite = (res: { status: number; body: unknown }) => ({
  refused: res.status >= 400 && res.status < 500,
  status: res.status,
  detail: JSON.stringify(res.body).slice(0, 200),
});

const RECEIVER = "TNQDRWktv1qrLnDT5ZL5ThHZJgGspaEHgM";

export const SSRF_FIELDS: SsrfField[] = [
  {
    method: "POST",
    path: "/v1/apps/tron/lease",
    field: "callback_url",
    // Sent as given and, for http targets, as https too: the scheme rule alone must not be what refuses a private address.
    async send({ stack, tronKey }, url) {
      const variants = url.startsWith("http://") ? [url, `https://${url.slice("http://".length)}`] : [url];
      for (const target of variants) {
        const quote = await call<{ data: { quote_id: string; cost: number } }>(stack.edgeUrl, "POST", "/v1/apps/tron/quote", {
          headers: { "x-api-key": tronKey },
          body: { receiver: RECEIVER, energy: 65_000, duration_seconds: 3_600 },
        });
        if (quote.status !== 200) return { refused: false, status: quote.status, detail: `quote: ${JSON.stringify(quote.body).slice(0, 200)}` };
        const res = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", {
          headers: { "x-api-key": tronKey },
          body: {
            quote_id: quote.body.data.quote_id,
            max_cost: quote.body.data.cost,
            receiver: RECEIVER,
            energy: 65_000,
            duration_seconds: 3_600,
            callback_url: target,
            callback_secret: "s".repeat(16),
          },
        });
        const outcome: SsrfOutcome = refusedAtWrite(res);
        if (!outcome.refused) return { ...outcome, detail: `${target}: ${outcome.detail}`, deferred: res.status === 202 && (await unresolvable(target)) };
      }
      return { refused: true, status: 400, detail: variants.join(", ") };
    },
  },
  {
    method: "POST",
    path: "/console/services",
    field: "config.base_url",
    async send({ stack, customer }, url) {
      const res = await call(stack.edgeUrl, "POST", "/console/services", {
        token: customer.token,
        body: {
          service_id: "ai-model",
          alias: alias("byok"),
          status: "active",
          config: { mode: "byok", provider: "openai", base_url: url, default_model: "gpt-x", api_key: "sk-ssrf-test-key-000000" },
        },
      });
      return refusedAtWrite(res);
    },
  },
  {
    method: "POST",
    path: "/console/services",
    field: "config.targets[].url",
    async send({ stack, customer, pushKey }, url) {
      const name = alias("push");
      const res = await call(stack.edgeUrl, "POST", "/console/services", {
        token: customer.token,
        body: { service_id: "webhook-push", alias: name, status: "active", config: { targets: [{ id: "t1", type: "webhook", url, enabled: true }] } },
      });
      if (res.status !== 201) return refusedAtWrite(res);
      // Accepted at write: the delivery must refuse to connect.
      const sent = await call<{ results?: { ok: boolean; error: string | null }[] }>(stack.edgeUrl, "POST", `/v1/apps/webhook-push/${name}/send`, {
        headers: { "x-api-key": pushKey },
        body: { title: "ssrf", text: "ssrf probe" },
      });
      const results =
        (sent.body as { results?: { ok: boolean }[]; data?: { results?: { ok: boolean }[] } }).results ??
        (sent.body as { data?: { results?: { ok: boolean }[] } }).data?.results ??
        [];
      return { refused: results.length > 0 && results.every((r) => !r.ok), status: sent.status, detail: JSON.stringify(sent.body).slice(0, 200) };
    },
  },
  {
    method: "POST",
    path: "/console/services",
    field: "config.reply_webhook_url",
    async send({ stack, customer }, url) {
      const res = await call(stack.edgeUrl, "POST", "/console/services", {
        token: customer.token,
        body: { service_id: "socialops", alias: alias("social"), status: "active", config: { reply_webhook_url: url, reply_webhook_secret: "s".repeat(16) } },
      });
      const outcome: SsrfOutcome = refusedAtWrite(res);
      if (!outcome.refused && res.status === 201 && (await unresolvable(url))) outcome.deferred = true;
      return outcome;
    },
  },
  {
    method: "POST",
    path: "/console/webhooks",
    field: "url",
    // HTTPS is required here as for job callbacks: an http target is also sent as https, so that
    // the scheme rule alone is never what refuses a private address.
    async send({ stack, customer }, url) {
      const variants = url.startsWith("http://") ? [url, `https://${url.slice("http://".length)}`] : [url];
      for (const target of variants) {
        const res = await call(stack.edgeUrl, "POST", "/console/webhooks", { token: customer.token, body: { url: target, events: ["ping"] } });
        const outcome: SsrfOutcome = refusedAtWrite(res);
        if (!outcome.refused) return { ...outcome, detail: `${target}: ${outcome.detail}`, deferred: res.status === 201 && (await unresolvable(target)) };
      }
      return { refused: true, status: 400, detail: variants.join(", ") };
    },
  },
  {
    method: "POST",
    path: "/v1/conversations/webhooks",
    field: "url",
    async send({ stack, conversationKey }, url) {
      const res = await call(stack.edgeUrl, "POST", "/v1/conversations/webhooks", {
        headers: { "x-api-key": conversationKey },
        body: { url, secret: "s".repeat(32) },
      });
      const outcome: SsrfOutcome = refusedAtWrite(res);
      if (!outcome.refused && res.status < 300 && (await unresolvable(url))) outcome.deferred = true;
      return outcome;
    },
  },
];

/** Loopback, private, link-local and metadata addresses, as literals, DNS names and encodings. */
export const SSRF_TARGETS = [
  "http://127.0.0.1/",
  "http://127.1/",
  "http://0.0.0.0/",
  "http://[::1]/",
  "http://[::ffff:127.0.0.1]/",
  "http://localhost/",
  "http://app.localhost/",
  "http://10.0.0.1/",
  "http://172.16.0.1/",
  "http://192.168.1.1/",
  "http://169.254.169.254/latest/meta-data/",
  "http://[fe80::1]/",
  "http://2130706433/",
  "http://0x7f000001/",
  "http://017700000001/",
  "http://metadata.google.internal/",
  "file:///etc/passwd",
  "gopher://127.0.0.1:6379/_INFO",
];
