// A full disk is a storage error, not a bug (issue 37, part 2), against the real process with its
// vault (and index) on a 20 MB tmpfs of the test's own: writes answer 507 storage_full naming
// the path, /health/deep says which path is full, and every note answered as indexed is
// searchable once space is back — with no tick and no restart, or at the next start when the
// router was stopped meanwhile.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";
import { canMountTmpfs, mountTmpfs, type Tmpfs } from "./support/tmpfs";
import { until } from "./support/until";

describe.skipIf(!canMountTmpfs)("the router's disk fills up", () => {
  let fs: Tmpfs;
  let main: MainProcess | undefined;
  let vault = "";
  let vaults = 0;
  const home = tempDir("full-home");
  const api = routerClient(() => main!.routerUrl!);

  const start = async (fresh = false) => {
    // A fresh vault: a new index whose write-ahead log has no room to spare.
    if (fresh) {
      await main?.stop();
      vault = join(fs.dir, `vault-${++vaults}`);
    }
    main = await startMain(
      ["--only", "router", "--vault", vault],
      // Commits held long enough that the disk fills under answered writes; no scheduled tick.
      { HOME: home, KB_ROUTER_TOKEN: TOKEN, INDEX_COMMIT_HOLD_MS: "1000", TICK_INTERVAL_SECONDS: "0" },
      { expect: ["router"] },
    );
  };

  beforeAll(() => {
    fs = mountTmpfs(20);
    vault = join(fs.dir, `vault-${vaults}`);
  });
  afterAll(async () => {
    await main?.stop("SIGKILL");
    await fs.unmount();
  });

  /** Ingests `n` notes, each findable by its own word; returns the words of those answered 201 indexed. */
  const ingestNotes = async (prefix: string, n: number): Promise<string[]> => {
    const words = Array.from({ length: n }, (_, i) => `${prefix}${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`);
    // At once: their rows share one held transaction.
    const answers = await Promise.all(
      words.map((w) => api.ingest(`# Note ${w}\n\nThe ${w} runbook: ${"restart the deploy queue and check the canary. ".repeat(20)}`, ["runbook"])),
    );
    for (const res of answers) {
      expect(res.status).toBe(201);
      expect(res.body.indexed).toBe(true);
    }
    return words;
  };

  const unfound = async (words: string[]): Promise<string[]> => {
    const missing: string[] = [];
    for (const w of words) {
      const res = await api.search(w, 5);
      if (res.status !== 200 || !(res.body.hits as Array<{ title: string }>).some((h) => h.title.includes(w))) missing.push(w);
    }
    return missing;
  };

  it("answers 507 storage_full naming the vault on /ingest, /marker and /tick, and /health/deep says the vault is full", async () => {
    await start();
    fs.fill();
    try {
      const ingest = await api.ingest("# Full\n\nA note the full disk cannot take.", ["full"]);
      expect(ingest.status).toBe(507);
      expect(ingest.body.error.code).toBe("storage_full");
      expect(ingest.body.error.message).toContain(vault);
      expect(ingest.headers.get("retry-after")).not.toBeNull();
      const batch = await api.call("/ingest/batch", { items: [{ content: "# One\n\nFirst note." }, { content: "# Two\n\nSecond note." }] });
      expect(batch.status).toBe(200);
      expect(batch.body.results.map((r: { status: number; error?: { code: string } }) => [r.status, r.error?.code])).toEqual([
        [507, "storage_full"],
        [507, "storage_full"],
      ]);
      const marker = await api.call("/marker", { type: "decision", content: "Keep deploys on Tuesdays" });
      expect(marker.status).toBe(507);
      expect(marker.body.error.code).toBe("storage_full");
      const tick = await api.call("/tick", {});
      expect(tick.status).toBe(507);
      expect(tick.body.error.code).toBe("storage_full");
      const deep = await api.call("/health/deep");
      expect(deep.status).toBe(200);
      expect(deep.body.status).toBe("fail");
      expect(deep.body.storage).toContainEqual(expect.objectContaining({ role: "vault", path: vault, full: true }));
      // The operator's log says it too.
      expect(main!.output()).toContain("writes refused (507 storage_full): no space left for vault");
    } finally {
      fs.free();
    }
    // Space back: the same writes go through, and the report says so.
    expect((await api.ingest("# Full\n\nA note the full disk cannot take.", ["full"])).status).toBe(201);
    expect((await api.call("/marker", { type: "decision", content: "Keep deploys on Tuesdays" })).status).toBe(201);
    expect((await api.call("/health/deep")).body.storage).toContainEqual(expect.objectContaining({ role: "vault", full: false }));
  }, 60_000);

  it("every note answered as indexed before the disk filled is searchable once space is back, with no tick and no restart", async () => {
    await start(true);
    const words = await ingestNotes("quokkafull", 40);
    // The held commit comes due on a full disk: it fails after the answers were sent.
    fs.fill();
    try {
      await main!.waitForOutput(/commit of \d+ answered writes failed/, 15_000);
    } finally {
      fs.free();
    }
    await until(async () => (await unfound(words)).length === 0, { ms: 20_000, what: "every answered note to be found" });
    expect(await unfound(words)).toEqual([]);
    // No tick did it (none is scheduled, none was asked for).
    const completed = join(vault, "brain-feed", "ticks", "completed");
    expect(existsSync(completed) ? readdirSync(completed) : []).toEqual([]);
  }, 90_000);

  it("a router stopped while such notes wait catches them up at its next start", async () => {
    await start(true);
    const words = await ingestNotes("wombatfull", 40);
    fs.fill();
    try {
      await main!.waitForOutput(/commit of \d+ answered writes failed/, 15_000);
      expect(await main!.stop("SIGTERM")).toBe(0);
    } finally {
      fs.free();
    }
    await start();
    expect(main!.output()).toContain("caught up from the vault's files");
    expect(await unfound(words)).toEqual([]);
  }, 90_000);
});
