// Debian's Chromium driven by playwright-core (never a downloaded browser), for the console
// suites. Screenshots go to test-artifacts/ (gitignored; CI keeps it as an artifact).
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { REPO } from "./main-process";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARTIFACTS = join(REPO, "test-artifacts", "console");

/** The browser, or null (with a warning) when Chromium is missing outside CI; in CI a missing browser fails. */
export async function launchChromium(): Promise<Browser | null> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === "true") throw new Error(`Chromium is missing at ${CHROMIUM} and CI=true (.ci/run installs it with apt)`);
    console.warn(`⚠ Chromium not found at ${CHROMIUM}: skipping the console browser suite`);
    return null;
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
