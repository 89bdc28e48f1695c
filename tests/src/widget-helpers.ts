import { createHmac } from "node:crypto";
import { call, type Stack } from "@gateway/testkit";
import { createKey, type Tenant } from "./keys-helpers.js";

/** An API key of the tenant with exactly these scopes. */
export async function keyWith(stack: Stack, tenant: Tenant, scopes: string[]): Promise<string> {
  return (await createKey(stack, tenant, { scopes })).key;
}

export const withApiKey = (key: string) => ({ headers: { "X-API-Key": key } });

/** Opens a widget session for a visitor with a key that has bot:session:create. */
export async function widgetSession(stack: Stack, key: string, visitorId: string, body: Record<string, unknown> = {}, baseUrl = stack.edgeUrl) {
  const res = await call(baseUrl, "POST", "/v1/apps/bot/widget/auth", { ...withApiKey(key), body: { visitor_id: visitorId, ...body } });
  if (res.status !== 201) throw new Error(`widget auth failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { token: string; refresh_token: string; chat_id: string; session_id: string; expires_in: number; conversation_id: string | null };
}

/** An HS256 JWT, for forged-token tests. */
export function hs256(secret: string, payload: Record<string, unknown>): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const head = `${enc({ alg: "HS256", typ: "JWT" })}.${enc(payload)}`;
  return `${head}.${createHmac("sha256", secret).update(head).digest("base64url")}`;
}

export type FeedEvent = { id: string; cursor: string; type: string; chat_id: string | null; conversation_id: string | null; data: any; created_at: string };

/** Reads a feed from `cursor` to its current end, page by page. */
export async function drain(baseUrl: string, path: string, auth: { token?: string; headers?: Record<string, string> }, cursor = "", limit = 100) {
  const events: FeedEvent[] = [];
  for (;;) {
    const res = await call(baseUrl, "GET", `${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, auth);
    if (res.status !== 200) throw new Error(`feed read failed: ${res.status} ${JSON.stringify(res.body)}`);
    events.push(...(res.body.data.events as FeedEvent[]));
    if (res.body.data.events.length === 0) return { events, cursor: res.body.data.next_cursor as string };
    cursor = res.body.data.next_cursor;
  }
}
