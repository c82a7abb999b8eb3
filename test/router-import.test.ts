// Bulk import (issue 21, part 1): POST /ingest/batch ingests every item as POST /ingest would —
// indexed before the answer, recognised when seen before, a bad item refused in its own result
// with the error shape and nothing of it written — and `router-cli import DIR` sends a folder of
// notes through it, with progress lines when piped and the exit codes of the other commands.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { type MainProcess, REPO, startMain, tempDir } from "./support/main-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";

let main: MainProcess;
let vault = "";
const api = routerClient(() => main.routerUrl!);
const MAX = 4096;

beforeAll(async () => {
  vault = join(tempDir("router-import"), "vault");
  main = await startMain(
    ["--only", "router", "--vault", vault],
    { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0", INGEST_MAX_BYTES: String(MAX) },
    { expect: ["router"] },
  );
});
afterAll(async () => {
  await main?.stop();
});

/** Every note file ingest has written (under ingest/<date>/). */
const ingestedFiles = (): string[] => {
  const dir = join(vault, "ingest");
  return existsSync(dir)
    ? readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith(".md"))
    : [];
};

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn({
    cmd: [process.execPath, join(REPO, "cli/router-cli.ts"), ...args],
    env: { ...process.env, HOME: tempDir("import-home"), BRAIN_URL: main.routerUrl!, KB_ROUTER_TOKEN: TOKEN, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

describe("POST /ingest/batch", () => {
  it("ingests the good items, refuses the bad ones in their own results, and writes nothing of them", async () => {
    const before = ingestedFiles().length;
    const res = await api.call("/ingest/batch", {
      items: [
        { content: "# Okapi migration\nThe okapibatch herd moved north.", tags: ["zoo"] },
        { tags: ["no content"] },
        { content: "   " },
        { content: `# Too big\n${"x".repeat(MAX)}` },
        { content: "# Okapi migration\nThe okapibatch herd moved north.", tags: ["zoo"] },
        { content: "A second okapibatch note.", tags: "not-a-list" },
        { content: "---\ntags: [lesson]\n---\nPin okapibatch versions." },
      ],
    });
    expect(res.status).toBe(200);
    const r = res.body.results;
    expect(r.map((x: any) => [x.index, x.status])).toEqual([
      [0, 201],
      [1, 400],
      [2, 400],
      [3, 413],
      [4, 200],
      [5, 400],
      [6, 201],
    ]);
    expect(res.body).toMatchObject({ created: 2, duplicates: 1, failed: 4 });
    expect(r[0]).toMatchObject({ kind: "note", indexed: true, duplicate: false });
    expect(r[4]).toMatchObject({ id: r[0].id, duplicate: true, paths: r[0].paths });
    expect(r[1].error).toMatchObject({ code: "invalid_request" });
    expect(r[1].error.details.map((d: any) => d.path)).toContain("content");
    expect(r[5].error.details.map((d: any) => d.path)).toContain("tags");
    expect(r[3].error.code).toBe("content_too_large");
    expect(r[6].kind).toBe("lesson");
    expect(r[6].paths[1]).toMatch(/^left\/reference\/lessons-/);
    // Searchable when the answer returns; the refused items left no file.
    const found = await api.search("okapibatch producer:ingest");
    expect(found.body.hits.map((h: any) => h.path).sort()).toEqual([r[0].paths[0], r[6].paths[0]].sort());
    expect(ingestedFiles().length - before).toBe(2);
    expect(readFileSync(join(vault, r[0].paths[0]), "utf8")).toContain("source: api");
  });

  it("records the batch's signals in signals.md before it answers", async () => {
    const res = await api.call("/ingest/batch", {
      items: [
        { content: "---\nseverity: high\n---\nThe quagga queue is backing up.", tags: ["incident"] },
        { content: "The quagga cache is cold again.", tags: ["alert"] },
      ],
    });
    expect(res.body.results.map((r: any) => r.kind)).toEqual(["signal", "signal"]);
    const md = readFileSync(join(vault, "signals.md"), "utf8");
    expect(md).toContain("quagga queue is backing up");
    expect(md).toContain("quagga cache is cold again");
  });

  it("keeps a large batch's milestones in item order, though its files are made on the thread pool and finish in any order", async () => {
    const items = Array.from({ length: 300 }, (_, i) => ({ content: `Shipped the orderbatch ${i} release.`, tags: ["milestone"] }));
    const res = await api.call("/ingest/batch", { items });
    expect(res.body.created).toBe(300);
    const daily = res.body.results[0].paths[1];
    const log = readFileSync(join(vault, daily), "utf8");
    expect([...(log.match(/orderbatch \d+/g) ?? [])]).toEqual(items.map((_, i) => `orderbatch ${i}`));
  });

  it("writes a batch's fan-out together as one at a time would: milestones in item order, a repeated signal absorbed", async () => {
    const signal = (session: string) => ({ content: `---\nsession_id: ${session}\n---\nThe zebrabatch pump failed.`, tags: ["alert"] });
    const res = await api.call("/ingest/batch", {
      items: [
        { content: "Shipped the gnubatch one release.", tags: ["milestone"] },
        signal("s1"),
        { content: "Shipped the gnubatch two release.", tags: ["milestone"] },
        signal("s2"),
        { content: "Shipped the gnubatch three release.", tags: ["milestone"] },
      ],
    });
    expect(res.body.created).toBe(5);
    const r = res.body.results;
    expect(r.map((x: any) => x.kind)).toEqual(["milestone", "signal", "milestone", "signal", "milestone"]);
    const daily = r[0].paths[1];
    expect([r[2].paths[1], r[4].paths[1]]).toEqual([daily, daily]);
    const log = readFileSync(join(vault, daily), "utf8");
    expect(log.match(/gnubatch \w+/g)).toEqual(["gnubatch one", "gnubatch two", "gnubatch three"]);
    // The second signal is the first's duplicate: absorbed into its file, counted twice.
    expect(r[3].paths[1]).toBe(r[1].paths[1]);
    expect(readFileSync(join(vault, r[1].paths[1]), "utf8")).toContain("count: 2");
    // A later batch's repeat is absorbed into the same file too.
    const again = await api.call("/ingest/batch", { items: [signal("s3")] });
    expect(again.body.results[0].paths[1]).toBe(r[1].paths[1]);
    expect(readFileSync(join(vault, r[1].paths[1]), "utf8")).toContain("count: 3");
    expect(readdirSync(join(vault, "amygdala")).filter((n) => n.includes("zebrabatch"))).toHaveLength(1);
  });

  it("fails only the items whose grouped fan-out could not be written, and leaves nothing of them", async () => {
    const dailyDir = join(vault, "daily");
    const daily = join(dailyDir, `${new Date().toISOString().slice(0, 10)}.md`);
    const saved = existsSync(daily) ? readFileSync(daily, "utf8") : null;
    rmSync(daily, { force: true });
    mkdirSync(join(daily, "blocker"), { recursive: true }); // a folder where the daily log goes
    try {
      const before = ingestedFiles().length;
      const res = await api.call("/ingest/batch", {
        items: [
          { content: "Shipped the elandbatch one release.", tags: ["milestone"] },
          { content: "# Eland notes\nA plain elandbatch note." },
          { content: "Shipped the elandbatch two release.", tags: ["milestone"] },
        ],
      });
      expect(res.body.results.map((r: any) => r.status)).toEqual([500, 201, 500]);
      expect(ingestedFiles().length - before).toBe(1);
      const found = await api.search("elandbatch producer:ingest");
      expect(found.body.hits.map((h: any) => h.path)).toEqual([res.body.results[1].paths[0]]);
    } finally {
      rmSync(daily, { recursive: true, force: true });
      if (saved !== null) writeFileSync(daily, saved);
    }
    // Nothing was recorded as ingested: once the log can be written, the same items go in.
    const retry = await api.call("/ingest/batch", { items: [{ content: "Shipped the elandbatch one release.", tags: ["milestone"] }] });
    expect(retry.body.results[0].status).toBe(201);
    expect(readFileSync(daily, "utf8")).toContain("elandbatch one");
  });

  it("answers 400 in the error shape for no items, too many, or a body that is not {items}", async () => {
    for (const body of [{ items: [] }, { items: Array.from({ length: 1001 }, (_, i) => ({ content: `n${i}` })) }, [{ content: "x" }], { content: "x" }]) {
      const res = await api.call("/ingest/batch", body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    expect((await api.call("/ingest/batch", "{not json")).status).toBe(400);
  });

  it("needs the bearer token", async () => {
    const res = await fetch(`${main.routerUrl}/ingest/batch`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ items: [{ content: "x" }] }),
    });
    expect(res.status).toBe(401);
  });

  it("does not wait on the claim a dead process left on a content's ledger", async () => {
    const content = "# Claimed\nA claimedokapi note whose claim outlived its process.";
    const id = createHash("sha256").update(content.trim()).digest("hex").slice(0, 16);
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    const dir = join(vault, ".brain", "ingested");
    mkdirSync(dir, { recursive: true });
    // The ledger entry is its own claim: a crash leaves the entry holding the dead owner.
    writeFileSync(join(dir, `${id}.json`), JSON.stringify({ claim: { pid: dead.pid, host: hostname() } }));
    const res = await fetch(`${main.routerUrl}/ingest`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ content, tags: [] }),
      signal: AbortSignal.timeout(4_000),
    });
    expect(res.status).toBe(201);
    expect(JSON.parse(readFileSync(join(dir, `${id}.json`), "utf8"))).toMatchObject({ id, duplicate: false });
  });

  it("ingests content again whose ledger entry a crash left torn (once it is a second old), and writes the entry whole", async () => {
    const content = "# Torn\nA tornokapi note whose ledger entry was cut short.";
    const id = createHash("sha256").update(content.trim()).digest("hex").slice(0, 16);
    const dir = join(vault, ".brain", "ingested");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${id}.json`), '{"id":"');
    const res = await api.call("/ingest/batch", { items: [{ content }] });
    expect(res.body.results[0]).toMatchObject({ status: 201, id });
    expect(JSON.parse(readFileSync(join(dir, `${id}.json`), "utf8"))).toMatchObject({ id, duplicate: false });
    expect((await api.call("/ingest/batch", { items: [{ content }] })).body.results[0].status).toBe(200);
  });
});

describe("router-cli import", () => {
  it("imports a folder's notes (sub-folders too, dot-files and other files not), prints progress lines when piped, and skips them the second time", async () => {
    const dir = tempDir("import-src");
    mkdirSync(join(dir, "team", "ops"), { recursive: true });
    mkdirSync(join(dir, ".obsidian"), { recursive: true });
    writeFileSync(join(dir, "wombat-runbook.md"), "# Wombat runbook\nRestart the wombatimport service with care.\n");
    writeFileSync(join(dir, "team", "ops", "on-call handover.md"), "Hand over the wombatimport pager at nine.\n");
    writeFileSync(join(dir, "team", "notes.markdown"), "---\ntitle: Wombat notes\ntags: [ops]\n---\nwombatimport notes in frontmatter form.\n");
    writeFileSync(join(dir, ".obsidian", "workspace.md"), "wombatimport must not be imported from a dot-folder\n");
    writeFileSync(join(dir, "picture.txt"), "wombatimport in a text file\n");

    const first = await cli(["import", dir, "--tag", "imported"]);
    expect(first.stderr + first.stdout).toContain("3 new, 0 already there, 0 refused");
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/^import: 3\/3 notes, 3 new/m);
    const hits = (await api.search("wombatimport")).body.hits;
    expect(hits.map((h: any) => h.title).sort()).toEqual(["Wombat notes", "Wombat runbook", "on-call handover"]);
    expect(hits.every((h: any) => h.tags.includes("imported") && h.producer === "ingest")).toBe(true);
    expect(readFileSync(join(vault, hits[0].path), "utf8")).toContain("source: import");

    const again = await cli(["import", dir, "--json"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ total: 3, created: 0, duplicates: 3, failed: 0 });
    expect((await api.search("wombatimport")).body.hits).toHaveLength(3);
  });

  it("lists the notes the router refused and exits 2; a missing folder or a bad flag exits 2, no router exits 1", async () => {
    const dir = tempDir("import-bad");
    writeFileSync(join(dir, "empty.md"), "  \n");
    writeFileSync(join(dir, "big.md"), `# Big\n${"y".repeat(MAX)}`);
    writeFileSync(join(dir, "fine.md"), "# Fine\nA numbatimport note.\n");
    const res = await cli(["import", dir, "--batch", "2"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("1 new, 0 already there, 2 refused");
    expect(res.stderr).toMatch(/big\.md: 413 content_too_large/);
    expect(res.stderr).toMatch(/empty\.md: 400 invalid_request/);
    expect((await api.search("numbatimport")).body.hits).toHaveLength(1);

    const missing = await cli(["import", join(dir, "nope")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("is not a folder");
    expect((await cli(["import", dir, "--batch", "0"])).code).toBe(2);
    const down = Bun.spawn({
      cmd: [process.execPath, join(REPO, "cli/router-cli.ts"), "import", dir],
      env: { ...process.env, HOME: tempDir("import-home"), BRAIN_URL: "http://127.0.0.1:9", KB_ROUTER_TOKEN: TOKEN },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await down.exited).toBe(1);
  });
});
