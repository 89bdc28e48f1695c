// Demo data for a running local stack (scripts/stack.sh): an operator session,
// a demo tenant with a prepaid balance, the local mock provider as an upstream
// with a priced model, a managed instance, an API key, and a curl line and an
// SDK snippet that get a metered completion. Run it again and it reuses what
// exists: the balance is credited once, and each run adds a new demo key while the
// earlier ones keep working (it says how many there are).
if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: ./scripts/seed.sh   (or pnpm seed, or node scripts/seed.mjs), with the stack running

Creates demo data through the gateway's public API: the operator's session, the
tenant demo@gateway.local with a USD 10 balance (credited once), the local mock
provider as upstream demo-mock, the priced model demo-small, the managed instance
demo and a new API key (earlier demo keys keep working). Prints the key once, the
real balance, a curl line and an openai SDK snippet. Safe to run again.

Environment (all optional):
  GATEWAY_URL        the gateway (default http://127.0.0.1:$PORT, PORT default 8080)
  BOOTSTRAP_ADMIN_EMAIL / BOOTSTRAP_ADMIN_PASSWORD   the operator (as scripts/stack.sh)
  MOCK_PROVIDER_URL / MOCK_PROVIDER_PORT / MOCK_PROVIDER_API_KEY   the demo provider`);
  process.exit(0);
}
const base = process.env.GATEWAY_URL ?? `http://127.0.0.1:${process.env.PORT ?? "8080"}`;
const operator = {
  email: process.env.BOOTSTRAP_ADMIN_EMAIL ?? "admin@gateway.local",
  password: process.env.BOOTSTRAP_ADMIN_PASSWORD ?? "change-me-admin-password",
};
const demo = { email: "demo@gateway.local", password: "demo-password-123", tenant_name: "Demo tenant" };
// The mock provider scripts/stack.sh runs (packages/mock-provider).
const mockProvider = {
  url: process.env.MOCK_PROVIDER_URL ?? `http://127.0.0.1:${process.env.MOCK_PROVIDER_PORT ?? "8090"}/v1`,
  apiKey: process.env.MOCK_PROVIDER_API_KEY ?? "sk-local-demo",
};

async function call(method, path, { body, token, headers = {} } = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body ? { "content-type": "application/json" } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function must(res, ...ok) {
  if (!ok.includes(res.status)) throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function login(who) {
  return must(await call("POST", "/auth/login", { body: { email: who.email, password: who.password } }), 200).token;
}

const usd = (units) => `USD ${Math.floor(units / 10_000)}.${String(units % 10_000).padStart(4, "0")}`;
const INITIAL_CREDIT = 100_000;

// Each step returns what it did, printed after its label.
const steps = {
  async operator(ctx) {
    ctx.operatorToken = await login(operator);
    return `${operator.email} (signed in)`;
  },
  async tenant(ctx) {
    const res = await call("POST", "/auth/register", { body: demo });
    must(res, 201, 409);
    ctx.tenantToken = await login(demo);
    ctx.tenantId = must(await call("GET", "/console/me", { token: ctx.tenantToken }), 200).data.tenant_id;
    return `${demo.email} / ${demo.password} (${res.status === 201 ? "created" : "exists"}; tenant ${ctx.tenantId})`;
  },
  async balance(ctx) {
    const before = must(await call("GET", "/console/balance", { token: ctx.tenantToken }), 200).data;
    must(
      await call("POST", `/ops/ledger/tenants/${ctx.tenantId}/credits`, {
        token: ctx.operatorToken,
        // Credited once, whatever the number of runs.
        headers: { "Idempotency-Key": "seed-initial-credit" },
        body: { units: INITIAL_CREDIT, reason: "demo balance" },
      }),
      201,
    );
    // What the tenant has now, read back (the credit's answer is the first run's, replayed).
    const now = must(await call("GET", "/console/balance", { token: ctx.tenantToken }), 200).data;
    const credited = now.available_units + now.reserved_units > before.available_units + before.reserved_units;
    return `${usd(now.available_units)} available, ${usd(now.reserved_units)} reserved (${credited ? `${usd(INITIAL_CREDIT)} credited now` : `the ${usd(INITIAL_CREDIT)} demo credit was given on an earlier run`})`;
  },
  async upstream(ctx) {
    const body = { provider: "openai", base_url: mockProvider.url, api_key: mockProvider.apiKey, enabled: true };
    must(await call("PUT", "/ops/ai/upstreams/demo-mock", { token: ctx.operatorToken, body }), 200);
    const test = must(await call("POST", "/ops/ai/upstreams/demo-mock/test", { token: ctx.operatorToken }), 200).data;
    return `demo-mock → ${mockProvider.url} (${test.authenticated ? "connection ok" : `not connected: ${JSON.stringify(test)}`})`;
  },
  async model(ctx) {
    const model = must(
      await call("PUT", "/ops/ai/models/demo-small", { token: ctx.operatorToken, body: { upstream_id: "demo-mock", upstream_model: "mock-small" } }),
      200,
    ).data;
    const price =
      model.price ??
      must(
        await call("POST", "/ops/ai/models/demo-small/prices", {
          token: ctx.operatorToken,
          body: { input_units_per_mtok: 1_500, output_units_per_mtok: 6_000 },
        }),
        201,
      ).data.price;
    return `demo-small, price v${price.version}: ${price.input_units_per_mtok} / ${price.output_units_per_mtok} units per million input / output tokens`;
  },
  async instance(ctx) {
    must(
      await call("POST", "/console/services", {
        token: ctx.tenantToken,
        body: {
          service_id: "ai-model",
          alias: "demo",
          status: "active",
          config: { mode: "managed", default_model: "demo-small", max_tokens_per_request: 256 },
        },
      }),
      201,
    );
    return "demo (ai-model:demo, managed), default model demo-small";
  },
  async key(ctx) {
    // A key's secret is shown only when it is created, so each run makes a new one;
    // the earlier ones are left working (code and shells may still use them).
    const earlier = must(await call("GET", "/console/keys", { token: ctx.tenantToken }), 200).data.filter((k) => k.name === "seed demo key");
    const key = must(await call("POST", "/console/keys", { token: ctx.tenantToken, body: { name: "seed demo key", scopes: ["ai:invoke"] } }), 201).data;
    ctx.apiKey = key.key;
    const kept =
      earlier.length === 0
        ? ""
        : `; ${earlier.length} earlier demo key${earlier.length === 1 ? "" : "s"} still work${earlier.length === 1 ? "s" : ""} (revoke in the console: API keys)`;
    return `${key.prefix}… created (scope ai:invoke; shown once, below)${kept}`;
  },
};

const ctx = {};
try {
  for (const [name, step] of Object.entries(steps)) console.log(`  ${name.padEnd(9)} ${await step(ctx)}`);
} catch (err) {
  console.error(`seed failed: ${err.message}\nIs the stack running? Start it with ./scripts/stack.sh`);
  process.exit(1);
}
console.log(`
Web console: ${base}/app/  (sign in as ${demo.email} / ${demo.password}, or as the operator)

A metered completion (reserves, calls the demo provider, settles; see the X-Service-* headers):
  curl -si ${base}/v1/apps/ai/demo/v1/chat/completions -H "X-API-Key: ${ctx.apiKey}" -H "content-type: application/json" -d '{"model":"demo-small","messages":[{"role":"user","content":"Hello, gateway"}]}'

The same with the official openai SDK (npm i openai):
  import OpenAI from "openai";
  const client = new OpenAI({ apiKey: "${ctx.apiKey}", baseURL: "${base}/v1/apps/ai/demo/v1" });
  const { data: completion, response } = await client.chat.completions
    .create({ model: "demo-small", messages: [{ role: "user", content: "Hello, gateway" }] })
    .withResponse();
  console.log(completion.choices[0].message.content, response.headers.get("x-service-final-cost"));

Balance and usage (as the demo tenant):
  curl -s ${base}/console/balance -H "Authorization: Bearer ${ctx.tenantToken}"
  curl -s ${base}/console/services/managed-ai/usage -H "Authorization: Bearer ${ctx.tenantToken}"
`);
