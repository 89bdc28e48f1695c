// The web console in a real browser (Debian's Chromium through playwright-core)
// against the real stack and the mock provider: a customer signs up, creates an
// instance and a key, calls the model through the API and sees the usage record and
// the balance change; an operator publishes a new price and releases a request in
// review. Screenshots of the main pages go to docs/screenshots/ (linked from the README).
import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { call, signIn, startStack, type Stack } from "@gateway/testkit";
import { launchBrowser, openPage, screenshot } from "./support/browser.js";
import { balance, managedModel, mockProvider, operator, upstream, usageRecord, type Operator } from "./support/managed-ai.js";

let stack: Stack;
let provider: MockProvider;
let browser: Browser;
let op: Operator;
const pageErrors: string[] = [];

const customer = { email: `console-${Date.now().toString(36)}@example.com`, password: "console-password-123", tenant: "Console Demo Ltd" };
const CREDIT = 100_000;
const usdText = (units: number) => `$${Math.floor(units / 10_000).toLocaleString("en-US")}.${String(units % 10_000).padStart(4, "0")}`;

beforeAll(async () => {
  provider = await mockProvider();
  // A loaded machine boots slowly; the assertions below do not depend on speed.
  stack = await startStack({ readyTimeoutMs: 150_000 });
  op = await operator(stack);
  await upstream(stack, op, provider, "mock");
  await managedModel(stack, op, { alias: "demo-small", upstreamId: "mock", inputPerMtok: 3_000_000, outputPerMtok: 9_000_000 });
  browser = await launchBrowser();
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await stack?.shutdown();
  await provider?.close();
});

async function go(page: Page, path: string) {
  await page.goto(`${stack.edgeUrl}/app/#/${path}`);
  await page.locator("main h1").waitFor();
}

describe("the console", () => {
  let key = "";
  let requestId = "";
  let finalUnits = 0;
  let tenantToken = "";

  it("is served by the edge under /app/ with a strict content security policy", async () => {
    const res = await fetch(`${stack.edgeUrl}/app/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(await res.text()).toContain('<div id="root">');
    const redirect = await fetch(`${stack.edgeUrl}/app`, { redirect: "manual" });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get("location")).toBe("/app/");
    // Unknown paths under /app/ are the API's usual 404.
    const missing = await fetch(`${stack.edgeUrl}/app/nothing-here.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: "not_found" });
  });

  it("a customer signs up, creates an instance and a key (the secret shown once)", async () => {
    const page = await openPage(browser, pageErrors);
    await page.goto(`${stack.edgeUrl}/app/`);
    await screenshot(page, "sign-in");
    // A wrong password reads as the API's message, not a crash.
    await page.getByLabel("Email", { exact: true }).fill(customer.email);
    await page.getByLabel("Password", { exact: true }).fill("not-the-password");
    await page.getByRole("button", { name: "Sign in" }).last().click();
    await expect.poll(() => page.locator(".error").textContent()).toMatch(/request req_|request [A-Za-z0-9_-]+\)/);

    await page.getByRole("button", { name: "Create an account" }).click();
    await page.getByLabel("Email", { exact: true }).fill(customer.email);
    await page.getByLabel("Password", { exact: true }).fill(customer.password);
    await page.getByLabel("Organisation (optional)", { exact: true }).fill(customer.tenant);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.locator("main h1", { hasText: "Overview" }).waitFor();

    tenantToken = await signIn(stack.edgeUrl, customer.email, customer.password);
    const me = await call<{ data: { tenant_id: string } }>(stack.edgeUrl, "GET", "/console/me", { token: tenantToken });
    const credit = await call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${me.body.data.tenant_id}/credits`, {
      token: op.token,
      body: { units: CREDIT, reason: "console e2e" },
    });
    expect(credit.status).toBe(201);

    await go(page, "instances");
    await page.getByLabel("Alias", { exact: true }).fill("demo");
    await page.getByLabel("Default model", { exact: true }).fill("demo-small");
    await page.getByLabel("Max tokens per request", { exact: true }).fill("64");
    await page.getByRole("button", { name: "Save instance" }).click();
    await page.getByText("Saved ai-model:demo.").waitFor();
    await page.locator("td code", { hasText: "ai-model:demo" }).waitFor();
    await screenshot(page, "instances");

    await go(page, "keys");
    await page.getByLabel("Name", { exact: true }).fill("console e2e key");
    await page.getByLabel("Instances", { exact: true }).fill("ai-model:demo");
    await page.getByLabel("Allowed addresses", { exact: true }).fill("127.0.0.1/32, ::1/128");
    await page.getByLabel("Daily quota", { exact: true }).fill("1000");
    await page.getByLabel("Rate per minute", { exact: true }).fill("600");
    await page.getByLabel("Concurrency", { exact: true }).fill("4");
    await page.getByLabel("Spend budget", { exact: true }).fill("5000000");
    await page.locator('select[name="budget_period"]').selectOption("month");
    await page.getByRole("button", { name: "Create key" }).click();
    key = (await page.getByTestId("secret").textContent()) ?? "";
    expect(key).toMatch(/^gw_/);
    const listed = await call<{
      data: {
        name: string;
        service_aliases: string[];
        allowed_ips: string[];
        daily_quota: number;
        rate_limit_per_minute: number;
        concurrency_limit: number;
        scopes: string[];
      }[];
    }>(stack.edgeUrl, "GET", "/console/keys", { token: tenantToken });
    expect(listed.body.data[0]).toMatchObject({
      name: "console e2e key",
      scopes: ["ai:invoke"],
      service_aliases: ["ai-model:demo"],
      allowed_ips: ["127.0.0.1/32", "::1/128"],
      daily_quota: 1000,
      rate_limit_per_minute: 600,
      concurrency_limit: 4,
      budget: { limit_units: 5_000_000, spent_units: 0, period: "month" },
    });
    await page.getByRole("button", { name: "I have stored it" }).click();
    await page.reload();
    await page.locator("td", { hasText: "console e2e key" }).waitFor();
    await page.locator("td", { hasText: "$0.0000 of $500.0000 this month" }).waitFor();
    expect(await page.content()).not.toContain(key);
    await screenshot(page, "keys");
    await page.context().close();
  });

  it("a call through the API shows as a usage record with its final cost, and the balance drops by it", async () => {
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/demo/v1/chat/completions`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-small", messages: [{ role: "user", content: "Hello from the console test" }], max_tokens: 20 }),
    });
    expect(res.status).toBe(200);
    requestId = res.headers.get("x-request-id")!;
    const finalCost = res.headers.get("x-service-final-cost")!;
    finalUnits = Math.round(Number(finalCost) * 10_000);
    expect(finalUnits).toBeGreaterThan(0);
    expect(await balance(stack, { token: tenantToken })).toEqual({ available_units: CREDIT - finalUnits, reserved_units: 0 });

    const page = await openPage(browser, pageErrors);
    await page.goto(`${stack.edgeUrl}/app/`);
    await page.getByLabel("Email", { exact: true }).fill(customer.email);
    await page.getByLabel("Password", { exact: true }).fill(customer.password);
    await page.getByRole("button", { name: "Sign in" }).last().click();
    await page.locator("main h1", { hasText: "Overview" }).waitFor();
    await expect.poll(() => page.getByTestId("balance-available").textContent()).toBe(usdText(CREDIT - finalUnits));
    await expect.poll(() => page.locator(".chart svg").count()).toBe(4);
    await screenshot(page, "overview");

    await go(page, "usage");
    const row = page.locator("tr", { hasText: requestId });
    await row.waitFor();
    expect(await row.locator(".badge").textContent()).toBe("completed");
    expect(await row.getByTestId("final-cost").textContent()).toBe(usdText(finalUnits));
    // The totals count what was charged: completed managed records only.
    expect(await page.getByTestId("charged-total").textContent()).toBe(usdText(finalUnits));
    // What is loaded exports as CSV, money in units as the API gives it.
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export CSV" }).click()]);
    expect(download.suggestedFilename()).toMatch(/^usage-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = readFileSync((await download.path())!, "utf8").split("\r\n");
    expect(csv[0]).toBe("request_id,created_at,instance,model,price_id,mode,status,reserved_units,final_units,error_code");
    expect(csv[1]).toMatch(new RegExp(`^${requestId},[^,]+,demo,demo-small,[^,]+,managed,completed,\\d+,${finalUnits},$`));
    await page.getByLabel("X-Request-ID", { exact: true }).fill(requestId);
    await page.getByRole("button", { name: "Look up" }).click();
    await page.getByTestId("request-view").waitFor();
    expect(await page.getByTestId("request-view").textContent()).toContain("console e2e key");
    expect(await page.getByTestId("request-api").textContent()).toBe("Chat Completions (OpenAI)");
    await screenshot(page, "usage");

    await go(page, "prices");
    await page.locator("td code", { hasText: "demo-small" }).waitFor();
    await screenshot(page, "prices");

    // A page whose API this gateway may not have says so instead of breaking.
    await go(page, "files");
    // The tenant's storage quota shows with the session, before any key is given.
    await page.getByTestId("quota-files").waitFor();
    expect(await page.getByTestId("quota-bytes").textContent()).toBe("0 B of 10 GiB");
    expect(await page.getByTestId("quota-files").textContent()).toBe("0 of 10,000");
    await page.getByLabel("API key", { exact: true }).fill(key);
    await page.getByRole("button", { name: "Use this key" }).click();
    await page.locator("main .card").first().waitFor();
    expect(await page.content()).not.toContain(key);
    await page.context().close();
  });

  it("an operator publishes a new price and releases a request in review, with a reason", async () => {
    // A stream that ends without usage leaves its record in review with the hold in place.
    provider.set({ omitUsage: true });
    const stream = await fetch(`${stack.edgeUrl}/v1/apps/ai/demo/v1/chat/completions`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-small", messages: [{ role: "user", content: "A stream without usage" }], max_tokens: 20, stream: true }),
    });
    await stream.text();
    provider.reset();
    const reviewId = stream.headers.get("x-request-id")!;
    const held = await usageRecord(stack, reviewId);
    expect(held).toMatchObject({ status: "review", error_code: "usage_unavailable" });
    const heldUnits = Number(held!.reserved_units);

    const page = await openPage(browser, pageErrors);
    await page.goto(`${stack.edgeUrl}/app/`);
    await page.getByLabel("Email", { exact: true }).fill(stack.admin.email);
    await page.getByLabel("Password", { exact: true }).fill(stack.admin.password);
    await page.getByRole("button", { name: "Sign in" }).last().click();
    await page.locator("nav .nav-title", { hasText: "Operator" }).waitFor();

    await go(page, "ops/upstreams");
    await page.getByRole("button", { name: "Test connection" }).first().click();
    await expect.poll(() => page.getByTestId("test-mock").textContent()).toMatch(/connected \(200\)/);
    await screenshot(page, "ops-upstreams");

    await go(page, "ops/models");
    await page.locator("tr", { hasText: "demo-small" }).getByRole("button", { name: "Prices" }).click();
    await page.getByLabel("Input (units per M tokens)", { exact: true }).fill("4000000");
    await page.getByLabel("Output (units per M tokens)", { exact: true }).fill("12000000");
    await page.getByRole("button", { name: "Publish new price" }).click();
    await page.getByText(/Published v2/).waitFor();
    await page.getByRole("cell", { name: "v2", exact: true }).waitFor();
    await page.getByRole("cell", { name: "v1", exact: true }).waitFor();
    await page.locator("td", { hasText: /^v2: \$400\.0000 \/ \$1,200\.0000$/ }).waitFor();
    // The model editor sets the per-image limit (CONTRACT.md 5); the list shows it.
    const editor = page.locator("form", { has: page.getByRole("button", { name: "Save model" }) });
    await editor.getByLabel("Alias", { exact: true }).fill("demo-small");
    await editor.getByLabel("Upstream id", { exact: true }).fill("mock");
    await editor.getByLabel("Provider's model", { exact: true }).fill("mock-small");
    await editor.getByLabel("Max tokens per image", { exact: true }).fill("1105");
    await editor.getByRole("button", { name: "Save model" }).click();
    await page.getByText(/Saved demo-small \(version 2\)/).waitFor();
    await page.locator("tr", { hasText: "demo-small" }).getByRole("cell", { name: "1105", exact: true }).waitFor();
    const edited = await call<{ data: { alias: string; max_tokens_per_image: number | null; max_output_tokens: number }[] }>(
      stack.edgeUrl,
      "GET",
      "/ops/ai/models",
      {
        token: op.token,
      },
    );
    expect(edited.body.data.find((m) => m.alias === "demo-small")).toMatchObject({ max_tokens_per_image: 1105, max_output_tokens: 4096 });
    await screenshot(page, "ops-models");
    const prices = await call<{ data: { version: number; input_units_per_mtok: number; output_units_per_mtok: number }[] }>(
      stack.edgeUrl,
      "GET",
      "/ops/ai/models/demo-small/prices",
      { token: op.token },
    );
    expect(prices.body.data.map((p) => [p.version, p.input_units_per_mtok, p.output_units_per_mtok])).toEqual([
      [2, 4_000_000, 12_000_000],
      [1, 3_000_000, 9_000_000],
    ]);

    await go(page, "ops/review");
    const row = page.locator("tr", { hasText: reviewId });
    await row.waitFor();
    await row.getByRole("button", { name: "Release…" }).click();
    await screenshot(page, "ops-review");
    // The reason is required: without one nothing is sent.
    await page.getByRole("button", { name: "Release and refund" }).click();
    expect((await usageRecord(stack, reviewId))!.status).toBe("review");
    await page.getByLabel("Reason (required)", { exact: true }).fill("stream ended without usage; refunded");
    await page.getByRole("button", { name: "Release and refund" }).click();
    await page.getByText(`Released ${reviewId}: refunded ${usdText(heldUnits)}.`).waitFor();
    expect(await usageRecord(stack, reviewId)).toMatchObject({ status: "failed" });
    expect(await balance(stack, { token: tenantToken })).toEqual({ available_units: CREDIT - finalUnits, reserved_units: 0 });

    await go(page, "ops/tenants");
    await page.locator("td", { hasText: customer.email }).waitFor();
    await page.locator("tr", { hasText: customer.email }).getByRole("button", { name: "Balance" }).click();
    await expect.poll(() => page.locator(".stats dd").first().textContent()).toBe(usdText(CREDIT - finalUnits));
    await screenshot(page, "ops-tenants");
    await page.context().close();
  });

  it("the request lookup says a request came through Anthropic's Messages API", async () => {
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/demo/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "demo-small", max_tokens: 20, messages: [{ role: "user", content: "Hello from Anthropic's API" }] }),
    });
    expect(res.status).toBe(200);
    const page = await openPage(browser, pageErrors);
    await page.goto(`${stack.edgeUrl}/app/`);
    await page.getByLabel("Email", { exact: true }).fill(customer.email);
    await page.getByLabel("Password", { exact: true }).fill(customer.password);
    await page.getByRole("button", { name: "Sign in" }).last().click();
    await page.locator("main h1", { hasText: "Overview" }).waitFor();
    await go(page, "usage");
    await page.getByLabel("X-Request-ID", { exact: true }).fill(res.headers.get("x-request-id")!);
    await page.getByRole("button", { name: "Look up" }).click();
    await page.getByTestId("request-view").waitFor();
    expect(await page.getByTestId("request-api").textContent()).toBe("Messages (Anthropic)");
    await page.context().close();
  });

  it("raised no script errors in any page", () => {
    expect(pageErrors).toEqual([]);
  });
});
