// The console's webhook and alert page in a real browser (Debian's Chromium through
// playwright-core, decision 0171) against the real stack: a tenant admin sets the balance
// alert, registers a webhook (a private target is refused; the secret is shown once),
// sends a test and sees its delivery, pages through the delivery log, and removes it.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, startStack, type Stack } from "@gateway/testkit";
import { AccountHooks } from "./support/account-hooks.js";
import { launchBrowser, openPage, screenshot } from "./support/browser.js";

let stack: Stack;
let browser: Browser;
let hooks: AccountHooks;
const pageErrors: string[] = [];

beforeAll(async () => {
  hooks = await new AccountHooks().start();
  stack = await startStack({
    readyTimeoutMs: 150_000,
    env: { jobs: { CALLBACK_ALLOW_HTTP_LOOPBACK: "true", CALLBACK_BASE_DELAY_MS: "20", CALLBACK_POLL_MS: "100" } },
  });
  browser = await launchBrowser();
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await stack?.shutdown();
  await hooks?.close();
});

async function signedIn(email: string, password: string): Promise<Page> {
  const page = await openPage(browser, pageErrors);
  await page.goto(`${stack.edgeUrl}/app/`);
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in" }).last().click();
  await page.locator("main h1", { hasText: "Overview" }).waitFor();
  await page.goto(`${stack.edgeUrl}/app/#/alerts`);
  await page.locator("main h1", { hasText: "Webhooks and alerts" }).waitFor();
  return page;
}

describe("the webhooks and alerts page", () => {
  it("sets the balance alert, registers a webhook with its secret shown once, tests it and pages its delivery log", async () => {
    const tenant = await newTenant(stack.edgeUrl, "alerts");
    const page = await signedIn(tenant.email, tenant.password);

    await expect.poll(() => page.getByTestId("alert-threshold").textContent()).toBe("No balance alert.");
    await page.getByLabel("Threshold", { exact: true }).fill("50000");
    await page.getByRole("button", { name: "Save threshold" }).click();
    await expect.poll(() => page.getByTestId("alert-threshold").textContent()).toContain("below $5.0000 (50000 units)");
    expect((await call(stack.edgeUrl, "GET", "/console/alerts", { token: tenant.token })).body).toEqual({ data: { balance_low_units: 50_000 } });

    // A private-network target is refused with the API's message.
    await page.getByLabel("URL", { exact: true }).fill("https://10.1.2.3/hooks");
    await page.getByRole("button", { name: "Register webhook" }).click();
    await expect.poll(() => page.locator(".error").first().textContent()).toMatch(/private, loopback or link-local/);

    const url = hooks.endpoint(`/console-${tenant.tenantId}`, "ok");
    await page.getByLabel("URL", { exact: true }).fill(url);
    await page.getByLabel("Description", { exact: true }).fill("ops pager");
    await page.locator('input[name="event:ping"]').check();
    await page.getByRole("button", { name: "Register webhook" }).click();
    const secret = (await page.getByTestId("secret").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "I have stored it" }).click();
    const row = page.locator("tr", { hasText: url });
    await row.waitFor();
    expect(await row.textContent()).toContain("ops pager");
    expect(await page.content()).not.toContain(secret);

    // The test button sends a signed ping; its delivery shows in the log.
    await row.getByRole("button", { name: "Send a test" }).click();
    await page.locator(".ok", { hasText: "A ping" }).waitFor();
    await expect.poll(() => hooks.at(`/console-${tenant.tenantId}`, "ping").length).toBe(1);
    const [ping] = hooks.at(`/console-${tenant.tenantId}`, "ping");
    expect(AccountHooks.signed(ping!, secret)).toBe(true);
    const deliveries = page.locator(".card", { hasText: `Deliveries to ${url}` });
    await expect
      .poll(async () => {
        await deliveries.getByRole("button", { name: "Refresh" }).click();
        return deliveries
          .locator("tr", { hasText: ping!.eventId })
          .locator(".badge")
          .textContent({ timeout: 1_000 })
          .catch(() => null);
      })
      .toBe("delivered");
    await screenshot(page, "alerts");

    // Twenty-five more pings: the log shows twenty, then the older ones on request, each once.
    const webhookId = (await call<{ data: { id: string }[] }>(stack.edgeUrl, "GET", "/console/webhooks", { token: tenant.token })).body.data[0]!.id;
    for (let i = 0; i < 25; i++) expect((await call(stack.edgeUrl, "POST", `/console/webhooks/${webhookId}/test`, { token: tenant.token })).status).toBe(202);
    await deliveries.getByRole("button", { name: "Refresh" }).click();
    await expect.poll(() => deliveries.locator("tbody tr").count()).toBe(20);
    await deliveries.getByRole("button", { name: "Older deliveries" }).click();
    await expect.poll(() => deliveries.locator("tbody tr").count()).toBe(26);
    expect(await deliveries.getByRole("button", { name: "Older deliveries" }).count()).toBe(0);

    await row.getByRole("button", { name: "Remove" }).click();
    await page.getByText("No webhooks yet: register one below.").waitFor();
    expect((await call(stack.edgeUrl, "GET", "/console/webhooks", { token: tenant.token })).body).toEqual({ data: [] });
    expect(pageErrors).toEqual([]);
    await page.context().close();
  });
});
