// router-cli's Claude Code hooks and their install, run as the compiled binary: the merge into
// ~/.claude/settings.json (additive, idempotent, uninstall exact), the hooks' answers against a
// live router, their bounds when the router is down or hangs, and the profile's commands run
// as written.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compiledClis, runCompiled } from "./support/cli";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { until } from "./support/until";

const TOKEN = "hooks-test-token";
let main: MainProcess;
let bin: string;

beforeAll(async () => {
  bin = await compiledClis();
  main = await startMain(["--only", "router"], { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0" }, { expect: ["router"] });
}, 120_000);
afterAll(async () => {
  await main?.stop();
});

/** The router's marker journal (its vault is ./vault in its HOME). */
function journal(): Array<Record<string, any>> {
  const dir = join(main.home, "vault", "brain-feed", "markers");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) =>
    readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  );
}

const post = (path: string, body: unknown) =>
  fetch(`${main.routerUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

async function hook(event: string, input: unknown, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const t0 = performance.now();
  const proc = Bun.spawn([join(bin, "router-cli"), "hook", event], {
    env: { PATH: "/usr/bin:/bin", ...env },
    stdin: new Blob([JSON.stringify(input)]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr, ms: performance.now() - t0 };
}

const install = (home: string, ...extra: string[]) =>
  runCompiled("router-cli", ["install", "--brain-url", main.routerUrl!, "--token", TOKEN, ...extra], { env: { HOME: home } });

describe("install and uninstall: the hooks in ~/.claude/settings.json", () => {
  it("adds the three hooks and the env beside the user's own, once, and uninstall restores the file byte for byte", async () => {
    const home = tempDir("hooks-home");
    mkdirSync(join(home, ".claude"), { recursive: true });
    const own = `{"theme":"dark","hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]},"env":{"EDITOR":"vim"}}`;
    writeFileSync(join(home, ".claude", "settings.json"), own);
    chmodSync(join(home, ".claude", "settings.json"), 0o644);
    expect((await install(home)).code).toBe(0);
    const settings = JSON.parse(readFileSync(join(home, ".claude", "settings.json"), "utf8"));
    expect(settings.theme).toBe("dark");
    expect(settings.hooks.Stop.map((g: any) => g.hooks[0].command)).toEqual(["notify-send done", `${join(bin, "router-cli")} hook stop`]);
    expect(settings.hooks.SessionStart[0].hooks[0].command).toBe(`${join(bin, "router-cli")} hook session-start`);
    expect(settings.hooks.UserPromptSubmit[0].hooks[0].command).toBe(`${join(bin, "router-cli")} hook prompt`);
    expect(settings.env).toEqual({ EDITOR: "vim", BRAIN_URL: main.routerUrl, KB_ROUTER_TOKEN: TOKEN, BRAIN_OUTBOX: join(home, ".router", "outbox") });
    // The token sits in the file: only the user may read it. No command line holds it.
    expect(statSync(join(home, ".claude", "settings.json")).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(settings.hooks)).not.toContain(TOKEN);
    // The profile's words, where Claude Code reads them.
    expect(readFileSync(join(home, ".claude", "CLAUDE.md"), "utf8")).toContain(`@${join(home, ".router", "profiles", "default", "CLAUDE.md")}`);

    const after = readFileSync(join(home, ".claude", "settings.json"), "utf8");
    expect((await install(home)).code).toBe(0);
    expect(readFileSync(join(home, ".claude", "settings.json"), "utf8")).toBe(after);

    expect((await runCompiled("router-cli", ["uninstall"], { env: { HOME: home } })).code).toBe(0);
    expect(readFileSync(join(home, ".claude", "settings.json"), "utf8")).toBe(own);
    expect(statSync(join(home, ".claude", "settings.json")).mode & 0o777).toBe(0o644);
    expect(existsSync(join(home, ".claude", "CLAUDE.md"))).toBe(false);
  }, 60_000);

  it("keeps what the user changed after install, and removes a settings file install created", async () => {
    const home = tempDir("hooks-home");
    expect((await install(home)).code).toBe(0);
    const path = join(home, ".claude", "settings.json");
    const s = JSON.parse(readFileSync(path, "utf8"));
    s.model = "opus";
    writeFileSync(path, JSON.stringify(s));
    writeFileSync(join(home, ".claude", "CLAUDE.md"), `# mine\n${readFileSync(join(home, ".claude", "CLAUDE.md"), "utf8")}`);
    expect((await runCompiled("router-cli", ["uninstall"], { env: { HOME: home } })).code).toBe(0);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ model: "opus" });
    expect(readFileSync(join(home, ".claude", "CLAUDE.md"), "utf8")).toBe("# mine\n");

    const fresh = tempDir("hooks-home");
    expect((await install(fresh)).code).toBe(0);
    expect((await runCompiled("router-cli", ["uninstall"], { env: { HOME: fresh } })).code).toBe(0);
    expect(existsSync(join(fresh, ".claude", "settings.json"))).toBe(false);
  }, 60_000);

  it("--no-hooks leaves ~/.claude/settings.json alone; a settings file that is not JSON stops install with a clear error", async () => {
    const home = tempDir("hooks-home");
    expect((await install(home, "--no-hooks")).code).toBe(0);
    expect(existsSync(join(home, ".claude", "settings.json"))).toBe(false);
    mkdirSync(join(home, ".claude"), { recursive: true });
    writeFileSync(join(home, ".claude", "settings.json"), "{ not json");
    const r = await install(home);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("settings.json is not valid JSON");
    expect(readFileSync(join(home, ".claude", "settings.json"), "utf8")).toBe("{ not json");
  }, 60_000);
});

describe("router-cli hook", () => {
  const env = (home: string, extra: Record<string, string> = {}) => ({ HOME: home, BRAIN_URL: main.routerUrl!, KB_ROUTER_TOKEN: TOKEN, ...extra });

  it("session-start prints the feed as SessionStart additionalContext, cut to BRAIN_FEED_MAX_CHARS", async () => {
    expect((await post("/marker", { type: "lesson", content: "Hook lesson: keep hooks fast." })).status).toBe(201);
    const home = tempDir("hook-home");
    const r = await hook("session-start", { session_id: "s-start", hook_event_name: "SessionStart", source: "startup" }, env(home));
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(out.hookSpecificOutput.additionalContext).toContain("Hook lesson: keep hooks fast.");
    const small = await hook("session-start", { session_id: "s-small" }, env(home, { BRAIN_FEED_MAX_CHARS: "300" }));
    expect(JSON.parse(small.stdout).hookSpecificOutput.additionalContext.length).toBeLessThanOrEqual(300);
  });

  it("prompt shows signals at or above AMYGDALA_MIN_SEVERITY raised since the session last looked, each once", async () => {
    const home = tempDir("hook-home");
    const input = { session_id: "s-prompt", hook_event_name: "UserPromptSubmit", prompt: "go" };
    await hook("session-start", input, env(home));
    expect((await hook("prompt", input, env(home))).stdout).toBe("");
    await post("/marker", { type: "signal", content: "low noise", attrs: { severity: "low", title: "low one" } });
    await post("/marker", { type: "signal", content: "Checkout is down", attrs: { severity: "critical", title: "checkout down" } });
    const r = await hook("prompt", input, env(home));
    const ctx = JSON.parse(r.stdout).hookSpecificOutput;
    expect(ctx.hookEventName).toBe("UserPromptSubmit");
    expect(ctx.additionalContext).toContain("checkout down");
    expect(ctx.additionalContext).not.toContain("low one");
    expect((await hook("prompt", input, env(home))).stdout).toBe("");
  });

  it("stop posts the transcript's inline markers once with their time, and replays the outbox", async () => {
    const home = tempDir("hook-home");
    const transcript = join(home, "t.jsonl");
    const ts = "2026-11-20T10:00:00.000Z";
    const entry = {
      type: "assistant",
      uuid: "u-1",
      timestamp: ts,
      message: {
        role: "assistant",
        content: [{ type: "text", text: '<!-- @decision title="hooks in Bun" -->\nHooks are compiled Bun.\n<!-- @/decision -->' }],
      },
    };
    writeFileSync(transcript, `${JSON.stringify({ type: "user", message: { content: "hi" } })}\n${JSON.stringify(entry)}\n`);
    mkdirSync(join(home, ".router", "outbox"), { recursive: true });
    writeFileSync(join(home, ".router", "outbox", "a.json"), JSON.stringify({ type: "lesson", content: "From the outbox, via stop.", attrs: { ts } }));
    const input = { session_id: "s-stop", transcript_path: transcript, hook_event_name: "Stop" };
    expect((await hook("stop", input, env(home))).code).toBe(0);
    expect((await hook("stop", { ...input, session_id: "other-session-same-file" }, env(home))).code).toBe(0);
    const feed: any = await (await fetch(`${main.routerUrl}/feed`, { headers: { authorization: `Bearer ${TOKEN}` } })).json();
    expect(feed.lessons.filter((l: any) => l.text.includes("From the outbox, via stop."))).toHaveLength(1);
    expect(readdirSync(join(home, ".router", "outbox")).filter((f) => f.endsWith(".json"))).toEqual([]);
    const decisions = journal().filter((r) => r.content === "Hooks are compiled Bun.");
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ type: "decision", ts, session_id: "s-stop", source: "claude-code" });
  });

  it("never blocks a session for more than 2 s when the router hangs, and buffers the markers", async () => {
    // A router that accepts connections and never answers.
    const hung = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const home = tempDir("hook-home");
      const transcript = join(home, "t.jsonl");
      writeFileSync(
        transcript,
        `${JSON.stringify({ type: "assistant", uuid: "u-9", timestamp: new Date().toISOString(), message: { content: [{ type: "text", text: "<!-- @lesson -->\nWritten while the router hung.\n<!-- @/lesson -->" }] } })}\n`,
      );
      const down = { HOME: home, BRAIN_URL: `http://127.0.0.1:${hung.port}`, KB_ROUTER_TOKEN: TOKEN };
      for (const event of ["session-start", "prompt", "stop"]) {
        const r = await hook(event, { session_id: "s-hung", transcript_path: transcript, prompt: "why does the payment suite flake on the sandbox" }, down);
        expect(r.code).toBe(0);
        expect(r.stdout).toBe("");
        expect(r.ms).toBeLessThan(2_000);
      }
      const waiting = readdirSync(join(home, ".router", "outbox")).filter((f) => f.endsWith(".json"));
      expect(waiting).toHaveLength(1);
      expect(JSON.parse(readFileSync(join(home, ".router", "outbox", waiting[0]!), "utf8")).content).toBe("Written while the router hung.");
    } finally {
      hung.stop(true);
    }
  });
});

describe("router-cli hook prompt: recall", () => {
  const env = (home: string, extra: Record<string, string> = {}) => ({ HOME: home, BRAIN_URL: main.routerUrl!, KB_ROUTER_TOKEN: TOKEN, ...extra });
  const context = (stdout: string): string => (stdout ? JSON.parse(stdout).hookSpecificOutput.additionalContext : "");
  const lesson = "The payment suite flakes when the sandbox clock drifts: sync the clock (chronyc makestep) before running it.";

  beforeAll(async () => {
    // Each lesson on its own day, so each is its own lesson log; a runbook that shares words with the prompt.
    expect((await post("/marker", { type: "lesson", content: lesson, attrs: { ts: "2026-09-03T10:00:00Z" } })).status).toBe(201);
    expect(
      (
        await post("/marker", {
          type: "lesson",
          content: "Kafka consumers lag after a broker restart; give them a minute.",
          attrs: { ts: "2026-09-04T10:00:00Z" },
        })
      ).status,
    ).toBe(201);
    expect(
      (await post("/ingest", { title: "Sandbox runbook", content: "The payment sandbox is reset nightly; its test cards are listed in the wiki.", tags: [] }))
        .ok,
    ).toBe(true);
    // A marker's lesson log is indexed soon after it is written.
    await until(async () => ((await (await post("/search", { query: "chronyc makestep" })).json()) as { hits: unknown[] }).hits.length > 0, {
      ms: 10_000,
      what: "the lesson indexed",
    });
  });

  it("carries the notes that bear on the prompt, lessons first, each with its path, and each once per session", async () => {
    const home = tempDir("recall-home");
    const input = { session_id: "s-recall", hook_event_name: "UserPromptSubmit", prompt: "Fix the flaky payment test in the sandbox, it times out" };
    const r = await hook("prompt", input, env(home));
    expect(r.code).toBe(0);
    const ctx = context(r.stdout);
    expect(ctx).toContain(lesson);
    expect(ctx).toContain("(left/reference/lessons-2026-09-03.md)");
    expect(ctx).toContain("router-cli get <path>");
    expect(ctx).not.toContain("Kafka");
    // The lesson comes before the runbook that also matched.
    expect(ctx).toContain("Sandbox runbook");
    expect(ctx.indexOf(lesson)).toBeLessThan(ctx.indexOf("Sandbox runbook"));

    // The same session's next prompt on the same subject is not told again; another session is.
    expect(context((await hook("prompt", { ...input, prompt: "the payment sandbox test still flakes" }, env(home))).stdout)).not.toContain(lesson);
    expect(context((await hook("prompt", { ...input, session_id: "s-recall-2" }, env(home))).stdout)).toContain(lesson);
  });

  it("of a day's lesson log gives the entry the prompt bears on, and another entry of it to a later prompt", async () => {
    const day = "2026-08-11T08:00:00Z";
    const first = "The nightly backup job skips tables without a primary key; add one before relying on restores.";
    const second = "Grafana alert rules for the billing queue live in the alerts repository, reviewed weekly.";
    for (const content of [first, second]) expect((await post("/marker", { type: "lesson", content, attrs: { ts: day } })).status).toBe(201);
    await until(async () => ((await (await post("/search", { query: "billing queue alert rules" })).json()) as { hits: unknown[] }).hits.length > 0, {
      ms: 10_000,
      what: "the lesson log indexed",
    });
    const home = tempDir("recall-home");
    const backup = context((await hook("prompt", { session_id: "s-log", prompt: "Restores from the nightly backup miss some tables" }, env(home))).stdout);
    expect(backup).toContain(first);
    expect(backup).not.toContain(second);
    const alerts = context((await hook("prompt", { session_id: "s-log", prompt: "Where are the billing queue alert rules kept?" }, env(home))).stdout);
    expect(alerts).toContain(second);
    expect(alerts).not.toContain(first);
    expect(alerts).toContain("(left/reference/lessons-2026-08-11.md)");
  });

  it("stays within BRAIN_RECALL_MAX_CHARS, looks nothing up for a word or two, and is off with BRAIN_RECALL_ENABLED=0", async () => {
    const home = tempDir("recall-home");
    const input = { session_id: "s-budget", prompt: "Fix the flaky payment test in the sandbox, it times out" };
    const small = context((await hook("prompt", input, env(home, { BRAIN_RECALL_MAX_CHARS: "400" }))).stdout);
    expect(small).toContain("payment suite flakes");
    expect(small.length).toBeLessThanOrEqual(400);
    expect((await hook("prompt", { session_id: "s-short", prompt: "go on" }, env(home))).stdout).toBe("");
    expect((await hook("prompt", { ...input, session_id: "s-off" }, env(home, { BRAIN_RECALL_ENABLED: "0" }))).stdout).toBe("");
  });
});

describe("the profile's words", () => {
  it("every command the packaged CLAUDE.md shows works as written against the live router", async () => {
    const home = tempDir("profile-home");
    expect((await install(home)).code).toBe(0);
    const settings = JSON.parse(readFileSync(join(home, ".claude", "settings.json"), "utf8"));
    const md = readFileSync(join(home, ".router", "profiles", "default", "CLAUDE.md"), "utf8");
    const commands = [...md.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
    expect(commands.length).toBe(3);
    for (const cmd of commands) {
      // The session's environment: what settings.json exports to it.
      const proc = Bun.spawn(["sh", "-c", `set -e; out=$(${cmd}); printf '%s' "$out"`], {
        env: { PATH: "/usr/bin:/bin", HOME: home, ...settings.env },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      expect({ cmd, code, err }).toEqual({ cmd, code: 0, err: "" });
      if (cmd.includes("/search")) expect(JSON.parse(out).hits).toBeDefined();
      if (cmd.includes("/marker")) expect(JSON.parse(out).id).toMatch(/^mk_/);
    }
    // The outbox file the last command wrote is delivered by sync.
    expect((await runCompiled("router-cli", ["sync"], { env: { HOME: home } })).code).toBe(0);
    expect(journal().filter((r) => r.content === "Use SQLite for the embedded index.")).toHaveLength(1);
  }, 60_000);
});

describe("EXTRACT_ON_BOOT=1", () => {
  it("records the markers of the transcripts already on disk once, at start, with their time", async () => {
    const home = tempDir("extract-home");
    const dir = join(home, "transcripts", "-work-proj");
    mkdirSync(dir, { recursive: true });
    const ts = "2026-11-01T08:30:00.000Z";
    const entry = {
      type: "assistant",
      uuid: "boot-entry",
      timestamp: ts,
      sessionId: "boot-session",
      message: { content: [{ type: "text", text: "<!-- @lesson -->\nLearned before the router ran.\n<!-- @/lesson -->" }] },
    };
    writeFileSync(join(dir, "boot-session.jsonl"), `${JSON.stringify(entry)}\n`);
    const env = { HOME: home, KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0", EXTRACT_ON_BOOT: "1", CLAUDE_TRANSCRIPTS_DIR: join(home, "transcripts") };
    const vault = join(home, "vault");
    const first = await startMain(["--only", "router", "--vault", vault], env, { expect: ["router"] });
    try {
      await first.waitForOutput("EXTRACT_ON_BOOT: 1 transcript(s)", 15_000);
      expect(first.output()).toContain("1 marker(s) recorded");
    } finally {
      await first.stop();
    }
    const second = await startMain(["--only", "router", "--vault", vault], env, { expect: ["router"] });
    try {
      await second.waitForOutput("EXTRACT_ON_BOOT: 1 transcript(s)", 15_000);
      expect(second.output()).toContain("0 marker(s) recorded, 1 already known");
    } finally {
      await second.stop();
    }
    const dayFiles = readdirSync(join(vault, "brain-feed", "markers"));
    const records = dayFiles.flatMap((f) =>
      readFileSync(join(vault, "brain-feed", "markers", f), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
    expect(records.filter((r) => r.content === "Learned before the router ran.")).toMatchObject([{ ts, session_id: "boot-session", source: "claude-code" }]);
  }, 60_000);
});
