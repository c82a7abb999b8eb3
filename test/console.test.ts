// The console pages (issue 18, part 5) in a real browser: Debian's Chromium driven by
// playwright-core against the real processes. Enter the token, search and see the marked hits,
// see a pipeline stage turn red after breaking the vault, see a signal arrive live; watch a job
// go from queued to succeeded with its tool call in the log. Screenshots: test-artifacts/console/.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshot } from "./support/browser";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { KEY, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";

setDefaultTimeout(60_000);
const TOKEN = "console-router-token";
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let browser: Browser | null = null;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function page(viewport = DESKTOP): Promise<Page> {
  const context = await browser!.newContext({ viewport });
  return context.newPage();
}

/** No request leaves the service's origin (no CDN, no font): the page works offline. */
function ownOriginOnly(p: Page, origin: string): string[] {
  const foreign: string[] = [];
  p.on("request", (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) foreign.push(r.url());
  });
  return foreign;
}

describe("the router console", () => {
  let main: MainProcess;
  let vault: string;
  const call = (path: string, body?: unknown) =>
    fetch(`${main.routerUrl}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  beforeAll(async () => {
    if (!browser) return;
    vault = join(tempDir("console-vault"), "vault");
    main = await startMain(["--only", "router", "--vault", vault], { KB_ROUTER_TOKEN: TOKEN }, { expect: ["router"] });
    expect(
      (await call("/ingest", { content: "# Canary deploys\nShip to one pod first and watch the error budget before the rest.", tags: ["deploy"] })).status,
    ).toBe(201);
    expect((await call("/ingest", { content: "# Rollbacks\nA rollback restores the previous image; canary first next time.", tags: ["deploy"] })).status).toBe(
      201,
    );
    expect(
      (await call("/marker", { type: "lesson", content: "Pin base image digests; tags move under you.", attrs: { source: "claude", session_id: "s1" } }))
        .status,
    ).toBe(201);
    expect((await call("/tick", { wait: true })).status).toBe(200);
    expect(existsSync(join(vault, "hot-arcs.md"))).toBe(true);
  });
  afterAll(async () => {
    await main?.stop();
  });

  it("asks for the token once, then searches and shows the hits with their matches marked", async () => {
    if (!browser) return;
    const p = await page();
    const foreign = ownOriginOnly(p, main.routerUrl!);
    await p.goto(`${main.routerUrl}/console`);
    await p.getByLabel("API token").fill(TOKEN);
    await p.getByRole("button", { name: "Use token" }).click();
    const query = p.getByRole("searchbox", { name: "Search the vault" });
    await query.fill("canary");
    await p.getByRole("button", { name: "Search" }).click();
    const hits = p.locator("#search-hits li");
    await p.waitForSelector("#search-hits mark");
    const api = (await (await call("/search", { query: "canary", limit: 20 })).json()) as { hits: Array<{ title: string }> };
    expect(await hits.count()).toBe(api.hits.length);
    expect(await p.locator("#search-hits .hit-title").allTextContents()).toEqual(api.hits.map((h) => h.title));
    expect(await p.locator("#search-hits .hit-title").allTextContents()).toContain("Canary deploys");
    expect((await p.locator("#search-hits mark").allTextContents()).map((t) => t.toLowerCase())).toContain("canary");
    await screenshot(p, "router-search-1280");
    // The token is in sessionStorage only: a reload keeps it, a new browser context does not.
    expect(await p.evaluate(() => Object.keys(localStorage).length)).toBe(0);
    expect(await p.evaluate(() => Object.keys(sessionStorage))).toEqual(["brain-stack:knowledge router:token"]);
    await p.reload();
    await p.waitForSelector("#search-query");
    expect(foreign).toEqual([]);
    await p.context().close();
  });

  it("shows the feed (hot arcs, lessons) and a new signal live, readable at phone width", async () => {
    if (!browser) return;
    const p = await page(PHONE);
    await p.goto(`${main.routerUrl}/console#feed`);
    await p.getByLabel("API token").fill(TOKEN);
    await p.getByRole("button", { name: "Use token" }).click();
    await p.waitForSelector("#lessons li");
    // The hot arcs the tick wrote, with their heat.
    await p.waitForSelector("#hot-arcs .heat");
    expect(await p.locator("#hot-arcs .heat .mono").first().textContent()).toMatch(/^\d+\.\d\d$/);
    expect(await p.locator("#lessons").textContent()).toContain("Pin base image digests");
    await p.waitForSelector("#signals-live.live");
    expect((await call("/marker", { type: "signal", content: "Deploy pipeline is red on main", attrs: { severity: "high", source: "ci" } })).status).toBe(201);
    await p.waitForSelector('#signals li[data-severity="high"]');
    expect(await p.locator("#signals").textContent()).toContain("Deploy pipeline is red on main");
    // Nothing wider than the phone's window.
    expect(await p.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(PHONE.width);
    await screenshot(p, "router-feed-phone");
    await p.context().close();
  });

  it("shows the seven pipeline stages, and a stage turns red with its evidence after the vault breaks", async () => {
    if (!browser) return;
    // The signal of the feed test is folded in by a tick: every stage starts ok.
    expect((await call("/tick", { wait: true })).status).toBe(200);
    const p = await page();
    await p.goto(`${main.routerUrl}/console#pipeline`);
    await p.getByLabel("API token").fill(TOKEN);
    await p.getByRole("button", { name: "Use token" }).click();
    await p.waitForSelector("#pipeline-stages article");
    expect(await p.locator("#pipeline-stages article").evaluateAll((els) => els.map((e) => e.getAttribute("data-stage")))).toEqual([
      "ingest",
      "drain",
      "arcs",
      "lessons",
      "signals",
      "feed",
      "index",
    ]);
    expect(await p.locator('#pipeline-stages article[data-stage="arcs"]').getAttribute("data-verdict")).toBe("ok");
    expect(await p.locator("#pipeline-status").textContent()).toBe("ok");
    // Break the vault: the arc records stay, the hot-arcs file the tick wrote is gone.
    rmSync(join(vault, "hot-arcs.md"));
    await p.getByRole("button", { name: "Check again" }).click();
    await p.waitForSelector('#pipeline-stages article[data-stage="arcs"][data-verdict="fail"]');
    expect(await p.locator("#pipeline-status").textContent()).toBe("fail");
    const arcs = p.locator('#pipeline-stages article[data-stage="arcs"]');
    expect(await arcs.locator("p").textContent()).toContain("hot-arcs.md was never written");
    // Red, as the user sees it.
    expect(
      await arcs.evaluate((e) => (globalThis as unknown as { getComputedStyle(x: unknown): { borderLeftColor: string } }).getComputedStyle(e).borderLeftColor),
    ).toBe("rgb(192, 57, 43)");
    await arcs.locator("summary").click();
    expect(await arcs.locator("dl.evidence").isVisible()).toBe(true);
    await screenshot(p, "router-pipeline-1280");
    await p.context().close();
  });
});

describe("the orchestrator console", () => {
  let o: Orchestrator;
  beforeAll(async () => {
    if (!browser) return;
    o = await startOrchestrator({ env: { FAKE_CLAUDE_SCENARIO: "thinking-tool-final", FAKE_CLAUDE_DELAY_MS: "250" } });
  });
  afterAll(async () => {
    await o?.stop();
  });

  it("watches a job go from queued to succeeded, with its tool call in the live log", async () => {
    if (!browser) return;
    const p = await page();
    const foreign = ownOriginOnly(p, o.url);
    await p.goto(`${o.url}/console`);
    await p.getByLabel("API token").fill(KEY);
    await p.getByRole("button", { name: "Use token" }).click();
    await p.waitForSelector("#drain-state");
    expect(await p.locator("#drain-state").textContent()).toBe("accepting jobs");
    await p.getByRole("textbox", { name: "Task" }).fill("Find the failing test");
    await p.getByRole("button", { name: "Run" }).click();
    await p.waitForSelector('#job-status:text("queued"), #job-status:text("running")');
    const seen = new Set<string>([(await p.locator("#job-status").textContent())!]);
    await p.waitForSelector('#job-log [data-type="tool_use"]');
    seen.add((await p.locator("#job-status").textContent())!);
    expect(await p.locator('#job-log [data-type="tool_use"]').textContent()).toBe("→ Bash bun test test/jobs.test.ts");
    await p.waitForSelector('#job-status:text("succeeded")', { timeout: 30_000 });
    expect(seen.has("succeeded")).toBe(false);
    const log = await p.locator("#job-log div").allTextContents();
    expect(log[0]).toBe("● queued");
    expect(log).toContain("● running");
    expect(log.at(-1)).toBe("● succeeded");
    expect(log.some((l) => l.startsWith("  ✓ (fail) cancel > sends SIGTERM"))).toBe(true);
    await p.waitForSelector('#jobs [data-status="succeeded"]');
    expect(await p.locator("#job-totals").textContent()).toContain("$0.0412");
    await screenshot(p, "orchestrator-job-1280");
    expect(foreign).toEqual([]);
    await p.context().close();
  });

  it("keeps the job list live from GET /jobs/events: a job submitted elsewhere appears and turns succeeded, no reload, no polling", async () => {
    if (!browser) return;
    const p = await page();
    const listCalls: string[] = [];
    let streams = 0;
    p.on("request", (r) => {
      const path = new URL(r.url()).pathname;
      if (path === "/jobs" && r.method() === "GET") listCalls.push(r.url());
      if (path === "/jobs/events") streams++;
    });
    await p.goto(`${o.url}/console`);
    await p.getByLabel("API token").fill(KEY);
    await p.getByRole("button", { name: "Use token" }).click();
    await p.waitForSelector('#jobs-live[data-live="true"]');
    await p.evaluate("window.__sameDocument = true");
    // Submitted by another client, not through this page.
    const res = await fetch(`${o.url}/jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ task: "Submitted from somewhere else" }),
    });
    const job = (await res.json()) as { id: string };
    await p.waitForSelector(`#jobs tr[data-job-id="${job.id}"]`);
    await p.waitForSelector(`#jobs tr[data-job-id="${job.id}"] [data-status="succeeded"]`, { timeout: 30_000 });
    expect(await p.evaluate("window.__sameDocument")).toBe(true);
    // The list came from the one stream: never fetched, no timer asking again.
    expect(streams).toBe(1);
    expect(listCalls).toEqual([]);
    await p.context().close();
  });

  it("lists the profiles and shows the drain state, readable at phone width", async () => {
    if (!browser) return;
    const p = await page(PHONE);
    await p.goto(`${o.url}/console#profiles`);
    await p.getByLabel("API token").fill(KEY);
    await p.getByRole("button", { name: "Use token" }).click();
    await p.waitForSelector("#profiles tr");
    expect(await p.locator("#profiles").textContent()).toContain("review");
    await p.getByRole("tab", { name: "Jobs" }).click();
    await p.waitForSelector("#jobs tr[data-job-id]");
    expect(await p.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(PHONE.width);
    await screenshot(p, "orchestrator-jobs-phone");
    await p.context().close();
  });

  it("refuses a wrong token and asks again", async () => {
    if (!browser) return;
    const p = await page();
    await p.goto(`${o.url}/console`);
    await p.getByLabel("API token").fill("wrong");
    await p.getByRole("button", { name: "Use token" }).click();
    await p.waitForSelector('#login-message:text("refused")');
    expect(await p.locator("#views").isHidden()).toBe(true);
    await p.context().close();
  });
});
