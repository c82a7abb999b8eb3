// Console benchmark (issue 18): the router's /console in Debian's Chromium (playwright-core).
// First load: bytes transferred (every request the page makes) and time to the first search
// result on screen (navigation start → the first hit rendered, the token already in the tab),
// in the page's own clock.
// Beside it, measured in the same run: the floor (the same POST /search as a bare fetch, and a
// blank page load in the same browser) and a peer (the service's own /docs page, Scalar).
//
//   bun run bench console
import { rmSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";
import { RouterClient } from "../../src/router/client.ts";
import { tempDir } from "../../test/support/main-process.ts";
import { startService } from "../../test/support/process.ts";
import { median } from "./lib/stats.ts";
import { num, table } from "./lib/table.ts";

const TOKEN = "bench-console-token";
const RUNS = Number(process.env.BENCH_RUNS) > 0 ? Number(process.env.BENCH_RUNS) : 10;
const tmp = tempDir("brain-bench-console");
const server = await startService("router", {
  vault: join(tmp, "vault"),
  cwd: tmp,
  env: { PATH: process.env.PATH, HOME: tmp, KB_ROUTER_TOKEN: TOKEN, LOG_LEVEL: "1" },
  logPath: join(tmp, "router.log"),
});
const url = server.url;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
});

try {
  const client = new RouterClient({ baseUrl: url, token: TOKEN });
  for (let i = 0; i < 200; i++) {
    await client.ingest({ content: `# Note ${i}\nCanary deploys ship to one pod first (${i}); rollbacks restore the previous image.`, tags: ["deploy"] });
  }

  /** A fresh tab (cold cache) with the token in sessionStorage; bytes of every response. */
  async function fresh(): Promise<{ page: Page; bytes: () => number; requests: () => number }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript((t) => sessionStorage.setItem("brain-stack:knowledge router:token", t), TOKEN);
    // In the page's own clock: as soon as the search box is there, search; note when the first hit is on screen.
    await context.addInitScript(`(() => {
      const tick = () => {
        const input = document.getElementById("search-query");
        if (!input) return void requestAnimationFrame(tick);
        window.__ready = performance.now();
        new MutationObserver((_, obs) => {
          if (document.querySelector("#search-hits li mark")) {
            window.__firstHit = performance.now();
            obs.disconnect();
          }
        }).observe(document.getElementById("search-hits"), { childList: true, subtree: true });
        input.value = "canary rollback";
        input.form.requestSubmit();
      };
      document.addEventListener("DOMContentLoaded", tick);
    })()`);
    const page = await context.newPage();
    let bytes = 0;
    let requests = 0;
    page.on("requestfinished", async (r) => {
      requests++;
      const sizes = await r.sizes().catch(() => null);
      if (sizes) bytes += sizes.responseBodySize + sizes.responseHeadersSize;
    });
    return { page, bytes: () => bytes, requests: () => requests };
  }

  const firstResult: number[] = [];
  const loaded: number[] = [];
  let pageBytes = 0;
  let pageRequests = 0;
  for (let i = 0; i < RUNS; i++) {
    const { page, bytes, requests } = await fresh();
    await page.goto(`${url}/console#search`);
    // A function, not a string: a string predicate is eval'd in the page, which the console's CSP refuses.
    await page.waitForFunction(() => (globalThis as { __firstHit?: number }).__firstHit !== undefined);
    const t = (await page.evaluate("({ ready: window.__ready, hit: window.__firstHit })")) as { ready: number; hit: number };
    loaded.push(t.ready);
    firstResult.push(t.hit);
    pageBytes = bytes();
    pageRequests = requests();
    await page.context().close();
  }

  const apiOnly: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await client.search({ query: "canary rollback", limit: 20 });
    apiOnly.push(performance.now() - t0);
  }
  const blank: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const { page } = await fresh();
    await page.goto(`${url}/health`);
    blank.push((await page.evaluate("performance.getEntriesByType('navigation')[0].responseEnd")) as number);
    await page.context().close();
  }
  const docs = await fresh();
  let foreign = 0;
  docs.page.on("request", (r) => void (r.url().startsWith(url) || foreign++));
  await docs.page.goto(`${url}/docs`, { waitUntil: "networkidle" }).catch(() => {});
  const docsBytes = docs.bytes();
  const docsRequests = docs.requests();
  await docs.page.context().close();

  console.log(`router /console, ${RUNS} cold loads each, 200 notes in the vault\n`);
  console.log(
    table([
      ["", "console", "floor", "peer: /docs (Scalar)"],
      [
        "first load, bytes",
        `${num(pageBytes / 1024, 1)} KiB in ${pageRequests} request(s)`,
        "",
        `${num(docsBytes / 1024, 1)} KiB in ${docsRequests} request(s)${foreign ? ` + ${foreign} to other hosts (a CDN; not counted)` : ""}`,
      ],
      ["search box ready, p50", `${num(median(loaded), 1)} ms`, `${num(median(blank), 1)} ms (GET /health received, same browser)`, ""],
      ["to the first search result, p50", `${num(median(firstResult), 1)} ms`, `${num(median(apiOnly), 1)} ms (the POST /search alone)`, ""],
    ]),
  );
} finally {
  await browser.close();
  await server.stop();
  rmSync(tmp, { recursive: true, force: true });
}
