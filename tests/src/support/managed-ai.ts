import OpenAI from "openai";
import { startMockProvider, type MockProvider } from "@gateway/mock-provider";
import { afterAll, beforeAll } from "vitest";
import { call, newTenant, signIn, startStack, type Stack, type StackOptions } from "@gateway/testkit";

export const PROVIDER_KEY = "sk-mock-provider-secret-0001";

/** A priced managed model behind the local mock provider, set up through the operator API. */
export type ManagedModel = { alias: string; priceId: string; inputPerMtok: number; outputPerMtok: number };

export type Operator = { token: string };

export async function operator(stack: Stack): Promise<Operator> {
  return { token: await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password) };
}

export async function mockProvider(): Promise<MockProvider> {
  return startMockProvider({ apiKey: PROVIDER_KEY });
}

function must<T>(res: { status: number; body: T }, status: number, what: string): T {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function upstream(stack: Stack, op: Operator, provider: MockProvider, id: string): Promise<void> {
  must(
    await call(stack.edgeUrl, "PUT", `/ops/ai/upstreams/${id}`, {
      token: op.token,
      body: { provider: "openai", base_url: provider.url, api_key: PROVIDER_KEY },
    }),
    200,
    "upstream",
  );
}

export async function managedModel(
  stack: Stack,
  op: Operator,
  options: { alias: string; upstreamId: string; inputPerMtok: number; outputPerMtok: number; maxOutputTokens?: number },
): Promise<ManagedModel> {
  must(
    await call(stack.edgeUrl, "PUT", `/ops/ai/models/${options.alias}`, {
      token: op.token,
      body: {
        upstream_id: options.upstreamId,
        upstream_model: "mock-small",
        ...(options.maxOutputTokens ? { max_output_tokens: options.maxOutputTokens } : {}),
      },
    }),
    200,
    "model",
  );
  const priced = must(
    await call<{ data: { price: { id: string } } }>(stack.edgeUrl, "POST", `/ops/ai/models/${options.alias}/prices`, {
      token: op.token,
      body: { input_units_per_mtok: options.inputPerMtok, output_units_per_mtok: options.outputPerMtok },
    }),
    201,
    "price",
  );
  return { alias: options.alias, priceId: priced.data.price.id, inputPerMtok: options.inputPerMtok, outputPerMtok: options.outputPerMtok };
}

export type Customer = Awaited<ReturnType<typeof newTenant>> & { key: string; keyId: string };

/** A tenant with `units` of balance, a managed instance `alias` and an `ai:invoke` key. */
export async function customer(
  stack: Stack,
  op: Operator,
  options: { units: number; alias: string; defaultModel: string; config?: Record<string, unknown>; keyPolicy?: Record<string, unknown> },
): Promise<Customer> {
  const tenant = await newTenant(stack.edgeUrl, "ai");
  if (options.units > 0) {
    must(
      await call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${tenant.tenantId}/credits`, {
        token: op.token,
        body: { units: options.units, reason: "test balance" },
      }),
      201,
      "credit",
    );
  }
  must(
    await call(stack.edgeUrl, "POST", "/console/services", {
      token: tenant.token,
      body: {
        service_id: "ai-model",
        alias: options.alias,
        status: "active",
        config: { mode: "managed", default_model: options.defaultModel, ...options.config },
      },
    }),
    201,
    "instance",
  );
  const key = must(
    await call<{ data: { key: string; id: string } }>(stack.edgeUrl, "POST", "/console/keys", {
      token: tenant.token,
      body: { name: "ai", scopes: ["ai:invoke"], ...options.keyPolicy },
    }),
    201,
    "key",
  );
  return { ...tenant, key: key.data.key, keyId: key.data.id };
}

/** The official SDK pointed at an instance: what customers use. No retries, so each call is one request. */
export function sdk(stack: Stack, c: Customer, alias: string, baseUrl = stack.edgeUrl): OpenAI {
  return new OpenAI({ apiKey: c.key, baseURL: `${baseUrl}/v1/apps/ai/${alias}/v1`, maxRetries: 0, timeout: 30_000 });
}

export async function balance(stack: Stack, c: { token: string }): Promise<{ available_units: number; reserved_units: number }> {
  const { available_units, reserved_units } = must(
    await call<{ data: { available_units: number; reserved_units: number } }>(stack.edgeUrl, "GET", "/console/balance", { token: c.token }),
    200,
    "balance",
  ).data;
  return { available_units, reserved_units };
}

/**
 * The balance once it shows `expected`, waiting at most the 1 s within which the
 * contract says both views reflect a settled call (section 4): charges from an
 * allotment reach the ledger in batches (docs/decisions/0028). The last reading
 * when it never does.
 */
export async function balanceWithin1s(stack: Stack, c: { token: string }, expected: { available_units: number; reserved_units?: number }) {
  const until = Date.now() + 1_000;
  for (;;) {
    const b = await balance(stack, c);
    if (b.available_units === expected.available_units && (expected.reserved_units === undefined || b.reserved_units === expected.reserved_units)) return b;
    if (Date.now() > until) return b;
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function usageRecord(stack: Stack, id: string) {
  const rows = await stack.sql<{
    status: string;
    reserved_units: string;
    final_units: string | null;
    error_code: string | null;
    usage_json: string | null;
    hold_id: string | null;
  }>("managed-ai", "SELECT status, reserved_units::text, final_units::text, error_code, usage_json, hold_id FROM usage_records WHERE id = $1", [id]);
  return rows[0];
}

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** The gateway's documented input bound: 3 + Σ (4 + bytes(role) + bytes(name) + bytes(content)). */
export function inputBound(messages: { role: string; content: string; name?: string }[]): bigint {
  return BigInt(3 + messages.reduce((n, m) => n + 4 + bytes(m.role) + bytes(m.name ?? "") + bytes(m.content), 0));
}

/** The contract's cost formula, written out again independently of the service's code. */
export function expectedCost(inputTokens: bigint, outputTokens: bigint, model: Pick<ManagedModel, "inputPerMtok" | "outputPerMtok">, discountBps = 0): bigint {
  const numerator = (inputTokens * BigInt(model.inputPerMtok) + outputTokens * BigInt(model.outputPerMtok)) * BigInt(10_000 - discountBps);
  const denominator = 10_000n * 1_000_000n;
  return (numerator + denominator - 1n) / denominator;
}

export const usd = (units: bigint) => `${units / 10_000n}.${(units % 10_000n).toString().padStart(4, "0")}`;

export type MeteredStack = { stack: Stack; provider: MockProvider; op: Operator; model: ManagedModel };

/**
 * For a test file about metered calls: a stack with the mock provider as upstream
 * `mock` and a managed model `small` whose prices have fractions of a unit per token
 * (so rounding up shows), started before the file's tests and stopped after them.
 * The fields are filled once the file's first `beforeAll` has run.
 */
export function meteredStack(options: StackOptions = {}): MeteredStack {
  const metered = {} as MeteredStack;
  beforeAll(async () => {
    metered.provider = await mockProvider();
    metered.stack = await startStack(options);
    metered.op = await operator(metered.stack);
    await upstream(metered.stack, metered.op, metered.provider, "mock");
    metered.model = await managedModel(metered.stack, metered.op, {
      alias: "small",
      upstreamId: "mock",
      inputPerMtok: 150_000_007,
      outputPerMtok: 600_000_011,
    });
  });
  afterAll(async () => {
    await metered.stack?.shutdown();
    await metered.provider?.close();
  });
  return metered;
}
