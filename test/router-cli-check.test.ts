// router-cli check, tick and sync as the compiled binary against the live router: every exit
// code of check and sync, tick --wait, and sync's idempotency.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Gateway, startGateway } from "./fixtures/openai-gateway";
import { compiledClis, fixturePath, runCompiled } from "./support/cli";
import { type MainProcess, startMain, tempDir } from "./support/main-process";

const TOKEN = "cli-check-token";

async function router(env: Record<string, string> = {}): Promise<{ main: MainProcess; vault: string }> {
  const vault = join(tempDir("cli-check"), "v");
  const main = await startMain(
    ["--only", "router", "--vault", vault],
    { KB_ROUTER_TOKEN: TOKEN, PORT_BRAIN_MCP: "0", TICK_INTERVAL_SECONDS: "0", ...env },
    { expect: ["router"] },
  );
  return { main, vault };
}
const cli = (url: string, args: string[], env: Record<string, string> = {}) =>
  runCompiled("router-cli", args, { env: { HOME: tempDir("cli-home"), BRAIN_URL: url, KB_ROUTER_TOKEN: TOKEN, ...env } });

beforeAll(async () => {
  await compiledClis();
}, 60_000);

describe("router-cli check", () => {
  let r: Awaited<ReturnType<typeof router>>;
  beforeAll(async () => {
    r = await router();
  });
  afterAll(() => r.main.stop());

  it("exits 0 on a fresh vault and prints a table of verdicts", async () => {
    const res = await cli(r.main.routerUrl!, ["check"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("VERDICT");
    expect(res.stdout).toContain("pipeline:drain");
    expect(res.stdout).toContain("deps:vault");
  });

  it("--json prints the reports and the outcome; --pipeline-only and --deps-only pick one", async () => {
    const all = JSON.parse((await cli(r.main.routerUrl!, ["check", "--json"])).stdout);
    expect(all).toMatchObject({ outcome: "clean", exit_code: 0 });
    expect(all.pipeline.stages).toHaveLength(7);
    expect(all.deep.probes.map((p: { name: string }) => p.name)).toContain("vault");
    const pipelineOnly = JSON.parse((await cli(r.main.routerUrl!, ["check", "--json", "--pipeline-only"])).stdout);
    expect(pipelineOnly.deep).toBeUndefined();
    expect(pipelineOnly.pipeline).toBeDefined();
    const depsOnly = JSON.parse((await cli(r.main.routerUrl!, ["check", "--json", "--deps-only"])).stdout);
    expect(depsOnly.pipeline).toBeUndefined();
    expect((await cli(r.main.routerUrl!, ["check", "--pipeline-only", "--deps-only"])).code).toBe(2);
  });

  it("finds the router and the token in ~/.router/.env (PORT_BRAIN_API, KB_ROUTER_TOKEN); --token and --brain-url override", async () => {
    const home = tempDir("cli-home");
    mkdirSync(join(home, ".router"), { recursive: true });
    const port = new URL(r.main.routerUrl!).port;
    writeFileSync(join(home, ".router", ".env"), `PORT_BRAIN_API=${port}\nKB_ROUTER_TOKEN=${TOKEN}\n`);
    const fromFile = await runCompiled("router-cli", ["check", "--json"], { env: { HOME: home } });
    expect(fromFile.code).toBe(0);
    writeFileSync(join(home, ".router", ".env"), `PORT_BRAIN_API=1\nKB_ROUTER_TOKEN=stale\n`);
    expect((await runCompiled("router-cli", ["check"], { env: { HOME: home } })).code).toBe(1);
    const flags = await runCompiled("router-cli", ["check", "--json", "--brain-url", r.main.routerUrl!, "--token", TOKEN], {
      env: { HOME: home, KB_ROUTER_TOKEN: "also-stale" },
    });
    expect(flags.code).toBe(0);
  });

  it("takes PORT_BRAIN_API from the environment too, over ~/.router/.env", async () => {
    const home = tempDir("cli-home");
    mkdirSync(join(home, ".router"), { recursive: true });
    writeFileSync(join(home, ".router", ".env"), `PORT_BRAIN_API=1\n`);
    const port = new URL(r.main.routerUrl!).port;
    const res = await runCompiled("router-cli", ["check", "--json"], { env: { HOME: home, PORT_BRAIN_API: port, KB_ROUTER_TOKEN: TOKEN } });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).outcome).toBe("clean");
  });

  it("with no token anywhere, says the token is missing (not that the router rejected one)", async () => {
    const res = await runCompiled("router-cli", ["tick", "--brain-url", r.main.routerUrl!], { env: { HOME: tempDir("cli-home") } });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("no router token: set KB_ROUTER_TOKEN");
    expect(res.stderr).not.toContain("rejected");
  });

  it("after a client-only install (--brain-url, --token), check needs nothing else", async () => {
    const home = tempDir("cli-home");
    const install = await runCompiled("router-cli", ["install", "--brain-url", r.main.routerUrl!, "--token", TOKEN, "--no-link"], { env: { HOME: home } });
    expect(install.code).toBe(0);
    const res = await runCompiled("router-cli", ["check", "--json"], { env: { HOME: home } });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).outcome).toBe("clean");
  });

  it("status lists the stack's containers, then reports the router's /health (exit 0)", async () => {
    const home = tempDir("cli-home");
    const cwd = tempDir("cli-cwd");
    writeFileSync(join(cwd, "compose.yml"), "name: brain\nservices:\n  brain-api:\n    image: x\n");
    const record = join(tempDir("docker-record"), "argv.jsonl");
    const res = await runCompiled("router-cli", ["status"], {
      cwd,
      env: { HOME: home, PATH: fixturePath({ docker: "fake-docker" }), FAKE_DOCKER_RECORD: record, BRAIN_URL: r.main.routerUrl!, KB_ROUTER_TOKEN: TOKEN },
    });
    expect(res.code).toBe(0);
    expect(readFileSync(record, "utf8")).toContain(JSON.stringify(["compose", "-f", join(cwd, "compose.yml"), "ps"]));
    expect(res.stdout + res.stderr).toContain(`${r.main.routerUrl}/health: ok (knowledge-router`);
  });

  it("exits 2 (degraded) when a stage warns", async () => {
    const day = "2026-01-01";
    mkdirSync(join(r.vault, "brain-feed", "markers"), { recursive: true });
    const old = new Date(Date.now() - 5 * 86_400_000).toISOString();
    writeFileSync(
      join(r.vault, "brain-feed", "markers", `${day}.jsonl`),
      `${JSON.stringify({ id: "mk_old", type: "lesson", content: "old", attrs: {}, ts: old, received_at: old, source: "test", session_id: null, path: "left/reference/x.md", written: true })}\n`,
    );
    const res = await cli(r.main.routerUrl!, ["check", "--json"]);
    expect(res.code).toBe(2);
    expect(JSON.parse(res.stdout).outcome).toBe("degraded");
  });

  it("exits 1 when nothing answers, with one clear line", async () => {
    const res = await cli("http://127.0.0.1:1", ["check"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("does not answer at http://127.0.0.1:1");
  });

  it("exits 1 when the token is rejected", async () => {
    const res = await cli(r.main.routerUrl!, ["check"], { KB_ROUTER_TOKEN: "wrong" });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("the router token from KB_ROUTER_TOKEN was refused (401 unauthorized)");
  });
});

describe("router-cli check against a broken router", () => {
  it("exits 1 when the server has no token (fail closed)", async () => {
    const vault = join(tempDir("cli-check"), "v");
    const main = await startMain(["--only", "router", "--vault", vault], { PORT_BRAIN_MCP: "0", TICK_INTERVAL_SECONDS: "0" }, { expect: ["router"] });
    try {
      const res = await cli(main.routerUrl!, ["check"]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain("503 server_token_unset: KB_ROUTER_TOKEN is not set");
    } finally {
      await main.stop();
    }
  });

  it("exits 1 when a dependency probe fails (the gateway rejects the key)", async () => {
    const gw: Gateway = startGateway({ apiKey: "right-key" });
    const r = await router({ LLM_API_BASE: `${gw.url}/v1`, LLM_API_KEY: "wrong-key" });
    try {
      const res = await cli(r.main.routerUrl!, ["check", "--deps-only", "--json"]);
      expect(res.code).toBe(1);
      const report = JSON.parse(res.stdout);
      expect(report.outcome).toBe("broken");
      expect(report.deep.probes.find((p: { name: string }) => p.name === "completion").verdict).toBe("fail");
    } finally {
      await r.main.stop();
      gw.stop();
    }
  });
});

describe("router-cli tick", () => {
  let r: Awaited<ReturnType<typeof router>>;
  beforeAll(async () => {
    r = await router();
  });
  afterAll(() => r.main.stop());

  it("with --wait, exits 0 once the tick succeeded", async () => {
    const waited = await cli(r.main.routerUrl!, ["tick", "--wait", "--no-ai", "--json"]);
    expect(waited.code).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ status: "succeeded", no_ai: true });
  });

  it("without --wait, answers at once with the queued tick", async () => {
    const queued = await cli(r.main.routerUrl!, ["tick", "--json"]);
    expect(queued.code).toBe(0);
    expect(JSON.parse(queued.stdout).tick_id).toMatch(/^[0-9a-f]{12}$/);
  });

  it("--dry-run writes nothing in the vault", async () => {
    // Let every earlier tick (they run one at a time, in order) finish before counting files.
    expect((await cli(r.main.routerUrl!, ["tick", "--wait"])).code).toBe(0);
    writeFileSync(join(r.vault, "raw", "note.md"), "# Note\n<!-- @lesson --> dry runs write nothing <!-- @/lesson -->\n");
    const before = readdirSync(r.vault, { recursive: true }).length;
    const res = await cli(r.main.routerUrl!, ["tick", "--dry-run", "--wait", "--json"]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).dry_run).toBe(true);
    expect(readdirSync(r.vault, { recursive: true }).length).toBe(before);
  });
});

describe("router-cli sync", () => {
  let r: Awaited<ReturnType<typeof router>>;
  beforeAll(async () => {
    r = await router();
  });
  afterAll(() => r.main.stop());

  const outboxHome = () => {
    const home = tempDir("sync-home");
    mkdirSync(join(home, ".router", "outbox"), { recursive: true });
    mkdirSync(join(home, ".router", "backlog"), { recursive: true });
    return home;
  };

  it("replays the outbox and backlog with their original times and keys, then enqueues a tick; a second run posts nothing", async () => {
    const home = outboxHome();
    const ts = "2026-03-04T05:06:07.000Z";
    writeFileSync(
      join(home, ".router", "outbox", "a.json"),
      JSON.stringify({
        type: "@lesson",
        content: "Replay keeps the original time.",
        attrs: { source: "hooks", ts },
        session_id: "s-1",
        idempotency_key: "key-a",
      }),
    );
    writeFileSync(
      join(home, ".router", "backlog", "b.json"),
      JSON.stringify({ type: "decision", content: "Use sync for offline markers.", attrs: { source: "hooks" }, idempotency_key: "key-b" }),
    );
    const first = await runCompiled("router-cli", ["sync", "--wait"], { env: { HOME: home, BRAIN_URL: r.main.routerUrl!, KB_ROUTER_TOKEN: TOKEN } });
    expect(first.code).toBe(0);
    expect(first.stdout + first.stderr).toContain("2 posted");
    expect(readdirSync(join(home, ".router", "outbox"))).toEqual([]);
    expect(readdirSync(join(home, ".router", "sent")).sort()).toEqual(["a.json", "b.json"]);
    const log = readFileSync(join(r.vault, "left", "reference", "lessons-2026-03-04.md"), "utf8");
    expect(log).toContain(`## ${ts} — hooks — s-1`);
    expect(first.stdout + first.stderr).toMatch(/tick [0-9a-f]{12} succeeded/);
    const second = await runCompiled("router-cli", ["sync"], { env: { HOME: home, BRAIN_URL: r.main.routerUrl!, KB_ROUTER_TOKEN: TOKEN } });
    expect(second.code).toBe(0);
    expect(second.stdout + second.stderr).toContain("0 posted, 0 already there");
    // Even the same files buffered again (a hook that retried) post nothing new: the keys match.
    copyFileSync(join(home, ".router", "sent", "a.json"), join(home, ".router", "outbox", "a.json"));
    copyFileSync(join(home, ".router", "sent", "b.json"), join(home, ".router", "backlog", "b.json"));
    const third = await runCompiled("router-cli", ["sync", "--wait"], { env: { HOME: home, BRAIN_URL: r.main.routerUrl!, KB_ROUTER_TOKEN: TOKEN } });
    expect(third.code).toBe(0);
    expect(third.stdout + third.stderr).toContain("0 posted, 2 already there");
    expect(readFileSync(join(r.vault, "left", "reference", "lessons-2026-03-04.md"), "utf8")).toBe(log);
  });

  it("sends the idempotency key: the same marker buffered twice is recorded once; --check narrates and waits for the tick", async () => {
    const home = outboxHome();
    const marker = { type: "milestone", content: "Shipped v2 once.", attrs: { source: "hooks" }, idempotency_key: "same-key" };
    // The same file name in both folders: neither copy may overwrite the other once sent.
    writeFileSync(join(home, ".router", "outbox", "m.json"), JSON.stringify(marker));
    writeFileSync(join(home, ".router", "backlog", "m.json"), JSON.stringify(marker));
    const res = await runCompiled("router-cli", ["sync", "--check"], { env: { HOME: home, BRAIN_URL: r.main.routerUrl!, KB_ROUTER_TOKEN: TOKEN } });
    expect(res.code).toBe(0);
    const out = res.stdout + res.stderr;
    expect(out).toContain("1 posted, 1 already there");
    expect(out).toContain(`${join(home, ".router", "outbox")}: 1 marker file(s)`);
    expect(out).toContain("m.json: recorded");
    expect(out).toContain("m.json: already recorded");
    expect(out).toMatch(/tick [0-9a-f]{12} succeeded/);
    expect(readdirSync(join(home, ".router", "sent")).sort()).toEqual(["m.1.json", "m.json"]);
  });

  it("exits 1 when the router rejects the token, keeping every marker buffered", async () => {
    const home = outboxHome();
    writeFileSync(join(home, ".router", "outbox", "a.json"), JSON.stringify({ type: "lesson", content: "kept while unauthorised", attrs: {} }));
    const res = await runCompiled("router-cli", ["sync"], { env: { HOME: home, BRAIN_URL: r.main.routerUrl!, KB_ROUTER_TOKEN: "wrong" } });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("401 unauthorized");
    expect(res.stderr).toContain("0 marker(s) posted before the failure");
    expect(existsSync(join(home, ".router", "outbox", "a.json"))).toBe(true);
    expect(existsSync(join(home, ".router", "sent"))).toBe(false);
  });

  it("exits 2 (degraded) for a marker the router refuses, moving it aside with the reason", async () => {
    const home = outboxHome();
    writeFileSync(join(home, ".router", "outbox", "bad.json"), JSON.stringify({ type: "rumour", content: "not a kind", attrs: {} }));
    writeFileSync(join(home, ".router", "outbox", "garbage.json"), "{not json");
    const res = await runCompiled("router-cli", ["sync"], { env: { HOME: home, BRAIN_URL: r.main.routerUrl!, KB_ROUTER_TOKEN: TOKEN } });
    expect(res.code).toBe(2);
    expect(readdirSync(join(home, ".router", "rejected")).sort()).toEqual(["bad.json", "bad.json.reason", "garbage.json", "garbage.json.reason"]);
    expect(readFileSync(join(home, ".router", "rejected", "bad.json.reason"), "utf8")).toStartWith("400");
  });

  it("with --wait, exits 1 when the tick it enqueued fails (the markers are already delivered)", async () => {
    const broken = await router();
    try {
      // The harvest state cannot be written where a folder squats its name: every tick fails.
      mkdirSync(join(broken.vault, ".brain", "tick", "harvest-state.json", "squatter"), { recursive: true });
      const home = outboxHome();
      writeFileSync(join(home, ".router", "outbox", "a.json"), JSON.stringify({ type: "lesson", content: "delivered even if the tick fails", attrs: {} }));
      const res = await runCompiled("router-cli", ["sync", "--wait"], { env: { HOME: home, BRAIN_URL: broken.main.routerUrl!, KB_ROUTER_TOKEN: TOKEN } });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain("harvest-state.json");
      expect(readdirSync(join(home, ".router", "sent"))).toEqual(["a.json"]);
    } finally {
      await broken.main.stop();
    }
  });

  it("exits 1 when the router does not answer, keeping every marker buffered", async () => {
    const home = outboxHome();
    writeFileSync(join(home, ".router", "outbox", "a.json"), JSON.stringify({ type: "lesson", content: "kept", attrs: {} }));
    const res = await runCompiled("router-cli", ["sync"], { env: { HOME: home, BRAIN_URL: "http://127.0.0.1:1", KB_ROUTER_TOKEN: TOKEN } });
    expect(res.code).toBe(1);
    expect(existsSync(join(home, ".router", "outbox", "a.json"))).toBe(true);
  });

  it("with nothing buffered and no router, prints only the error (no success line before it)", async () => {
    const home = outboxHome();
    const res = await runCompiled("router-cli", ["sync"], { env: { HOME: home, BRAIN_URL: "http://127.0.0.1:1", KB_ROUTER_TOKEN: TOKEN, NO_COLOR: "1" } });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).not.toContain("posted");
    expect(res.stderr).toContain("does not answer");
  });
});
