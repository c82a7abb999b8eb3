// Symlinks never lead out of the vault, and never stop a tick (issue 14, part 3), against the
// real process: a folder link in raw/ to outside, a link loop, and signal and lesson files
// linked in from outside; /search, /feed, signals.md and the tick's feed entries do not show
// them, the tick succeeds, and the pipeline report names the links it skipped.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";

const OUTSIDE_WORD = "zanzibaroutside";

describe("a vault with symlinks", () => {
  let main: MainProcess;
  let vault = "";
  const api = routerClient(() => main.routerUrl!);
  beforeAll(async () => {
    const root = tempDir("symlinks");
    vault = join(root, "vault");
    main = await startMain(["--only", "router", "--vault", vault], { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0" }, { expect: ["router"] });
    const outside = join(root, "outside");
    mkdirSync(join(outside, "notes"), { recursive: true });
    writeFileSync(join(outside, "notes", "secret.md"), `# Outside\nThe ${OUTSIDE_WORD} file is not the vault's.\n`);
    // A folder link out of the vault, a loop, and an in-vault note.
    symlinkSync(join(outside, "notes"), join(vault, "raw", "ext"));
    symlinkSync("../raw", join(vault, "raw", "loop"));
    writeFileSync(join(vault, "raw", "inside.md"), "# Inside\nThe quokkainside note.\n");

    // A signal and a lesson log recorded, then moved out of the vault and linked back in.
    // The outside copies then say what the vault never recorded.
    const signal = await api.call("/marker", { type: "signal", content: "Signal as recorded", attrs: { severity: "high", ts: new Date().toISOString() } });
    expect(signal.status).toBe(201);
    renameSync(join(vault, signal.body.path), join(outside, "signal.md"));
    writeFileSync(join(outside, "signal.md"), readFileSync(join(outside, "signal.md"), "utf8").replace("Signal as recorded", `Signal ${OUTSIDE_WORD}`));
    symlinkSync(join(outside, "signal.md"), join(vault, signal.body.path));
    const lesson = await api.call("/marker", { type: "lesson", content: "Lesson as recorded", attrs: { ts: new Date().toISOString() } });
    expect(lesson.status).toBe(201);
    renameSync(join(vault, lesson.body.path), join(outside, "lessons.md"));
    writeFileSync(join(outside, "lessons.md"), readFileSync(join(outside, "lessons.md"), "utf8").replace("Lesson as recorded", `Lesson ${OUTSIDE_WORD}`));
    symlinkSync(join(outside, "lessons.md"), join(vault, lesson.body.path));
  });
  afterAll(() => main.stop());

  it("runs a tick that succeeds, reporting the links it did not follow", async () => {
    const res = await api.call("/tick", { wait: true });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("succeeded");
    const warnings = JSON.stringify(res.body);
    expect(warnings).toContain("raw/ext");
    expect(warnings).toContain("raw/loop");
  });

  it("serves no outside text from /search, and the inside note still", async () => {
    expect((await api.search(OUTSIDE_WORD)).body.hits).toEqual([]);
    expect((await api.search("quokkainside")).body.hits.map((h: { path: string }) => h.path)).toEqual(["raw/inside.md"]);
  });

  it("keeps linked-in signal and lesson files out of /feed, signals.md and the feed entries", async () => {
    const feed = await api.call("/feed");
    expect(feed.status).toBe(200);
    expect(feed.text).not.toContain(OUTSIDE_WORD);
    // signals.md lists the vault's own signal files: there are none, so it is not written.
    const signals = join(vault, "signals.md");
    expect(existsSync(signals) ? readFileSync(signals, "utf8") : "").not.toContain(OUTSIDE_WORD);
    const dir = join(vault, "brain-feed");
    for (const f of readdirSync(dir).filter((n) => n.endsWith(".md"))) expect(readFileSync(join(dir, f), "utf8")).not.toContain(OUTSIDE_WORD);
  });

  it("keeps the drain and index stages green and lists the skipped links in the pipeline evidence", async () => {
    const res = await api.call("/health/pipeline");
    const stages = Object.fromEntries((res.body.stages as Array<{ name: string; verdict: string; evidence: Record<string, any> }>).map((s) => [s.name, s]));
    expect(stages.drain!.verdict).not.toBe("fail");
    expect(stages.index!.verdict).not.toBe("fail");
    const skipped = stages.lessons!.evidence.symlinks_skipped;
    expect(skipped.count).toBeGreaterThanOrEqual(4);
    expect(skipped.examples).toEqual(expect.arrayContaining(["raw/ext", "raw/loop"]));
  });
});
