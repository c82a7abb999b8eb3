// Crash and restart (issue 14, part 4), against the real process: a tick killed (SIGKILL)
// mid-run is failed at the next start however soon it comes, and the scheduler goes on; temp
// files and locks a dead process left are cleaned at start; a lock whose owner is gone does not
// hold up the next write.

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Gateway, startGateway } from "./fixtures/openai-gateway";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";
import { until } from "./support/until";

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}

describe("a router killed mid-tick", () => {
  let gw: Gateway;
  let main: MainProcess;
  let vault = "";
  let home = "";
  const api = routerClient(() => main.routerUrl!);
  beforeAll(() => {
    gw = startGateway();
    home = tempDir("crash-home");
    vault = join(tempDir("crash"), "vault");
  });
  afterAll(async () => {
    await main?.stop("SIGKILL");
    gw.stop();
  });

  const start = (env: Record<string, string>) =>
    startMain(["--only", "router", "--vault", vault], { HOME: home, KB_ROUTER_TOKEN: TOKEN, ...env }, { expect: ["router"] });

  it("fails the interrupted tick at once on restart (error_tail says so), cleans leftovers, and the scheduler goes on", async () => {
    main = await start({ TICK_INTERVAL_SECONDS: "0", LLM_API_BASE: `${gw.url}/v1`, LLM_TIMEOUT_MS: "600000" });
    expect((await api.call("/marker", { type: "signal", content: "Deploys are red again", attrs: { severity: "high" } })).status).toBe(201);
    // The model never answers: the tick stays in its arc-titling step until killed.
    gw.delay(10 * 60_000);
    const queued = await api.call("/tick", {});
    expect(queued.status).toBe(202);
    const id = queued.body.tick_id as string;
    await until(() => gw.requests.some((r) => r.path.endsWith("/chat/completions")), 15_000);
    expect((await api.call(`/tick/${id}`)).body.status).toBe("running");
    await main.stop("SIGKILL");

    // What a crash mid-write leaves: a temp file of an atomic write, and a lock of a dead holder.
    const pid = await deadPid();
    const temp = join(vault, "left", "reference", `.lessons-2026-01-01.md.${pid}.0123456789ab.tmp`);
    writeFileSync(temp, "half a file");
    const lock = join(vault, "left", "reference", "lessons-2026-01-01.md.lock");
    mkdirSync(lock);
    writeFileSync(`${lock}.owner`, JSON.stringify({ pid, host: (await import("node:os")).hostname() }));
    // …and a claim (the vault's shared files and ingest's ledger are claimed: common/claim.ts).
    const claim = join(vault, "left", "reference", "lessons-2026-01-02.md.claim");
    writeFileSync(claim, JSON.stringify({ pid, host: (await import("node:os")).hostname() }));

    // Restarted at once, with the scheduler on.
    main = await start({ TICK_INTERVAL_SECONDS: "1" });
    const failed = (await api.call(`/tick/${id}`)).body;
    expect(failed.status).toBe("failed");
    expect(failed.error_tail).toContain("stopped while this tick was running");
    expect(existsSync(temp)).toBe(false);
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(claim)).toBe(false);
    // The scheduler is not stuck behind the dead tick: a scheduled one runs and succeeds.
    await until(() => {
      const dir = join(vault, "brain-feed", "ticks", "completed");
      return existsSync(dir) && readdirSync(dir).length > 0;
    }, 20_000);
    expect(main.output()).not.toContain("scheduled tick skipped");
  }, 60_000);

  it("does not wait on a lock whose holder process is gone", async () => {
    // A claim on today's lesson log held by a process that died after start-up.
    const day = new Date().toISOString().slice(0, 10);
    const lock = join(vault, "left", "reference", `lessons-${day}.md.claim`);
    mkdirSync(join(vault, "left", "reference"), { recursive: true });
    writeFileSync(lock, JSON.stringify({ pid: await deadPid(), host: (await import("node:os")).hostname() }));
    const res = await fetch(`${main.routerUrl}/marker`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "lesson", content: "Locks of dead holders are stale at once." }),
      // Far below the 10 s after which a lock goes stale by age.
      signal: AbortSignal.timeout(4_000),
    });
    expect(res.status).toBe(201);
  });
});

describe("a router killed while its index holds a commit", () => {
  let main: MainProcess;
  const home = tempDir("held-home");
  const vault = join(tempDir("held"), "vault");
  const api = routerClient(() => main.routerUrl!);
  afterAll(async () => {
    await main?.stop("SIGKILL");
  });
  const start = () =>
    // A long hold, so the kill surely lands before the commit.
    startMain(
      ["--only", "router", "--vault", vault],
      { HOME: home, KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0", INDEX_COMMIT_HOLD_MS: "1000" },
      { expect: ["router"] },
    );
  const hits = async (q: string) => ((await api.search(q)).body.hits as Array<{ path: string }>).map((h) => h.path);

  it("answers an ingest searchable at once, and after a kill catches the index up from the files before it serves", async () => {
    main = await start();
    const first = await api.call("/ingest", { content: "# Quokka rotation\n\nThe quokka rotation runbook lives here." });
    expect(first.status).toBe(201);
    // Searchable as soon as it is answered (the same process's searches see the held write).
    expect(await hits("quokka rotation")).toEqual(first.body.paths.slice(0, 1));
    const second = await api.call("/ingest", { content: "# Wombat drills\n\nWombat drills run on Fridays." });
    expect(second.status).toBe(201);
    await main.stop("SIGKILL");
    // What the killed process left: the note's file, no committed row for it.
    const notePath = second.body.paths[0] as string;
    expect(existsSync(join(vault, notePath))).toBe(true);
    const db = new Database(join(vault, ".brain", "index.sqlite"), { readonly: true });
    const row = db.query("SELECT 1 FROM docs WHERE path = ?").get(notePath);
    db.close();
    expect(row).toBeNull();

    main = await start();
    expect(await hits("wombat drills")).toEqual([notePath]);
    expect(main.output()).toContain("stopped without closing its index; caught up from the vault's files");
    expect(await hits("quokka rotation")).toEqual(first.body.paths.slice(0, 1));
    // A clean stop leaves nothing to catch up.
    await main.stop("SIGTERM");
    main = await start();
    expect(main.output()).not.toContain("stopped without closing its index");
    expect(await hits("wombat drills")).toEqual([notePath]);
  }, 60_000);
});

describe("ingest under a failing index", () => {
  let gw: Gateway;
  let main: MainProcess;
  let vault = "";
  const api = routerClient(() => main.routerUrl!);
  beforeAll(async () => {
    gw = startGateway({ dim: 16 });
    vault = join(tempDir("ingest-order"), "vault");
    main = await startMain(
      ["--only", "router", "--vault", vault],
      { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0", EMBEDDINGS_URL: `${gw.url}/v1/embeddings`, EMBEDDINGS_DIM: "16" },
      { expect: ["router"] },
    );
  });
  afterAll(async () => {
    await main.stop();
    gw.stop();
  });

  it("leaves neither a file nor a hit when the index write fails (the file is written first, then taken back)", async () => {
    gw.failWith(500);
    const res = await api.ingest("# Walrus\nThe walrusorder note.", ["t"]);
    expect(res.status).toBeGreaterThanOrEqual(500);
    gw.failWith(0);
    const dir = join(vault, "ingest");
    const files = existsSync(dir) ? readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith(".md")) : [];
    expect(files).toEqual([]);
    expect((await api.search("walrusorder")).body.hits).toEqual([]);
  });

  it("leaves neither files nor hits for batch items whose index write fails, and answers each with its error", async () => {
    gw.failWith(500);
    const res = await api.call("/ingest/batch", {
      items: [{ content: "# Walrus one\nThe walrusbatch note." }, { content: "# Walrus two\nAnother walrusbatch note." }],
    });
    gw.failWith(0);
    expect(res.status).toBe(200);
    expect(res.body.failed).toBe(2);
    for (const r of res.body.results) {
      expect(r.status).toBeGreaterThanOrEqual(500);
      expect(r.error.code).toBeString();
    }
    const dir = join(vault, "ingest");
    const files = existsSync(dir) ? readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith(".md")) : [];
    expect(files).toEqual([]);
    expect((await api.search("walrusbatch")).body.hits).toEqual([]);
    // The same items go in once the index answers again: nothing was recorded as ingested.
    const retry = await api.call("/ingest/batch", { items: [{ content: "# Walrus one\nThe walrusbatch note." }] });
    expect(retry.body.results[0].status).toBe(201);
  });
});
