// router-cli get, recent and search --read as the compiled binary against the live router:
// readable on a terminal, --json for scripts, exit 1 for a failed call and 2 for bad input.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { compiledClis, runCompiled } from "./support/cli";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";

let main: MainProcess;
const cli = (args: string[]) => runCompiled("router-cli", args, { env: { HOME: tempDir("cli-home"), BRAIN_URL: main.routerUrl!, KB_ROUTER_TOKEN: TOKEN } });
const HOUR = 3_600_000;

beforeAll(async () => {
  const vault = join(tempDir("cli-notes"), "vault");
  const put = (rel: string, text: string, ageMs: number) => {
    const abs = join(vault, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, text);
    utimesSync(abs, new Date(Date.now() - ageMs), new Date(Date.now() - ageMs));
  };
  put("raw/zebra-plan.md", "---\ntags: [plan]\n---\n# Zebra plan\nStripes first, then [[zebra-notes]].\nsecond line\n", 1 * HOUR);
  put("raw/zebra-notes.md", "# Zebra notes\nObservations of zebras.\n", 5 * HOUR);
  put("raw/old.md", "# Old\nfrom last week\n", 24 * 7 * HOUR);
  await Promise.all([
    compiledClis(),
    (async () => {
      main = await startMain(["--only", "router", "--vault", vault], { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0" }, { expect: ["router"] });
      await routerClient(() => main.routerUrl!).call("/tick", { wait: true });
    })(),
  ]);
}, 120_000);
afterAll(async () => {
  await main?.stop();
});

describe("router-cli get", () => {
  it("prints the note, its links and backlinks", async () => {
    const res = await cli(["get", "raw/zebra-plan.md"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("── raw/zebra-plan.md — Zebra plan");
    expect(res.stdout).toContain("tags: plan");
    expect(res.stdout).toContain("Stripes first, then [[zebra-notes]].");
    expect(res.stdout).toContain("links: → raw/zebra-notes.md");
    const back = await cli(["get", "raw/zebra-notes.md"]);
    expect(back.stdout).toContain("backlinks: ← raw/zebra-plan.md");
  });

  it("prints JSON with --json, and says where it cut with --lines", async () => {
    const json = JSON.parse((await cli(["get", "raw/zebra-plan.md", "--json", "--lines", "2"])).stdout);
    expect(json).toMatchObject({ path: "raw/zebra-plan.md", body: "Stripes first, then [[zebra-notes]].", truncated_by: "lines" });
    const cut = await cli(["get", "raw/zebra-plan.md", "--max-chars", "5"]);
    expect(cut.stdout).toContain("cut by --max-chars");
  });

  it("exits 1 with the server's reason for a missing note, 2 for a bad flag", async () => {
    const missing = await cli(["get", "raw/nope.md"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("404 note_not_found");
    expect((await cli(["get", "raw/zebra-plan.md", "--max-chars", "lots"])).code).toBe(2);
  });
});

describe("router-cli recent", () => {
  it("lists what changed within a duration, newest first", async () => {
    const res = await cli(["recent", "--since", "1d"]);
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split("\n");
    expect(lines.map((l) => l.match(/raw\/\S+/)?.[0])).toEqual(["raw/zebra-plan.md", "raw/zebra-notes.md"]);
    const json = JSON.parse((await cli(["recent", "--since", new Date(Date.now() - 2 * HOUR).toISOString(), "--json"])).stdout);
    expect(json.notes.map((n: { path: string }) => n.path)).toEqual(["raw/zebra-plan.md"]);
    expect(json.next_cursor).toBeNull();
  });

  it("exits 2 for a --since it cannot read", async () => {
    const res = await cli(["recent", "--since", "last tuesday"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("--since");
  });
});

describe("router-cli search --read", () => {
  it("prints the hits, then the top ones in full", async () => {
    const res = await cli(["search", "zebra", "--read", "1"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/ 1\. raw\/zebra-\w+\.md/);
    expect(res.stdout.match(/^── /gm)).toHaveLength(1);
    const json = JSON.parse((await cli(["search", "zebra", "--read", "2", "--json"])).stdout);
    // Every word counts: the note holding both words first, the one holding "zebra" after it.
    const words = JSON.parse((await cli(["search", "zebra", "stripes", "--json"])).stdout);
    expect(words.hits.map((h: { path: string }) => h.path)).toEqual(["raw/zebra-plan.md", "raw/zebra-notes.md"]);
    expect(words.hits.map((h: { coverage: number }) => h.coverage)).toEqual([1, 0.5]);
    const all = JSON.parse((await cli(["search", "zebra", "stripes", "--all", "--json"])).stdout);
    expect(all.hits.map((h: { path: string }) => h.path)).toEqual(["raw/zebra-plan.md"]);
    const shown = await cli(["search", "zebra", "stripes"]);
    expect(shown.stdout).toContain("raw/zebra-plan.md — Zebra plan  (raw, score 1.000, words 100%)");
    expect(shown.stdout).toMatch(/raw\/zebra-notes\.md — Zebra notes {2}\(raw, score 0\.\d{3}, words 50%\)/);
    const typo = await cli(["get", "raw/zebra-plan.md", "--jsn"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown flag --jsn");
    expect(json.hits.length).toBe(2);
    expect(json.notes.map((n: { path: string }) => n.path)).toEqual(json.hits.map((h: { path: string }) => h.path));
  });
});
