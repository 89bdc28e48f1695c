import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { REPO_ROOT } from "@gateway/testkit";

/** Debian's Chromium (apt-get install -y chromium; scripts/test.sh installs it when missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const SCREENSHOTS = join(REPO_ROOT, "docs", "screenshots");
/** Set by `pnpm docs` (scripts/docs.sh): the documents a run writes are written only when asked. */
export const WRITE_DOCS = process.env.WRITE_DOCS === "1";

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (scripts/test.sh installs it)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}

/** A page that fails the test on any script error or console error the app logs. */
export async function openPage(browser: Browser, errors: string[]): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("dialog", (dialog) => void dialog.accept());
  return page;
}

/**
 * Takes a full-page screenshot (the page must render whole); saved to docs/screenshots/ only
 * under `pnpm docs` (WRITE_DOCS=1), so a test run leaves the working tree as it found it.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!WRITE_DOCS) {
    await page.screenshot({ fullPage: true });
    return;
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
