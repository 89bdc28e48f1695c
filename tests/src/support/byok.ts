import { startMockProvider, type MockProvider } from "@gateway/mock-provider";
import { call, newTenant, type Stack } from "@gateway/testkit";
import type { Operator } from "./managed-ai.js";

/** The customer's own provider key: it must reach their provider and nowhere else. */
export const CUSTOMER_KEY = "sk-customer-byok-SECRET-7f3a9c";
export const ACCOUNT_SECRET = "sk-connected-account-SECRET-41d2e8";

/** The customer's own OpenAI-compatible provider (a second mock, with the customer's key). */
export function customerProvider(apiKey = CUSTOMER_KEY): Promise<MockProvider> {
  return startMockProvider({ apiKey });
}

function must<T>(res: { status: number; body: T }, status: number, what: string): T {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export type ByokCustomer = Awaited<ReturnType<typeof newTenant>> & { key: string; keyId: string };

/** A tenant with a balance (to show it is left alone) and an `ai:invoke` key. */
export async function tenantWithKey(stack: Stack, op: Operator, units = 1_000_000): Promise<ByokCustomer> {
  const tenant = await newTenant(stack.edgeUrl, "byok");
  must(
    await call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${tenant.tenantId}/credits`, { token: op.token, body: { units, reason: "test balance" } }),
    201,
    "credit",
  );
  const key = must(
    await call<{ data: { key: string; id: string } }>(stack.edgeUrl, "POST", "/console/keys", {
      token: tenant.token,
      body: { name: "ai", scopes: ["ai:invoke"] },
    }),
    201,
    "key",
  );
  return { ...tenant, key: key.data.key, keyId: key.data.id };
}

/** Creates (or updates) a byok instance; `config` overrides and `top` adds top-level fields. */
export async function byokInstance(
  stack: Stack,
  c: { token: string },
  alias: string,
  provider: MockProvider,
  config: Record<string, unknown> = {},
  top: Record<string, unknown> = {},
) {
  return call(stack.edgeUrl, "POST", "/console/services", {
    token: c.token,
    body: {
      service_id: "ai-model",
      alias,
      status: "active",
      config: { mode: "byok", provider: "openai", base_url: provider.url, default_model: "mock-small", api_key: CUSTOMER_KEY, ...config },
      ...top,
    },
  });
}

/** The `data:` payloads of an SSE body, in order. */
export function sseData(text: string): string[] {
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice("data: ".length));
}
