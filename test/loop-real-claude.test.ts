// The loop with the real Claude Code CLI against the fixture Messages API: after a
// client-only `router-cli install`, a session starts with the feed in what it sends, sees a
// critical signal raised mid-session with its next prompt, and its inline markers reach the
// vault once with their original time — or wait in the outbox while the router is down,
// until `router-cli sync` delivers them once. Uninstall leaves the user's settings as they were.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AnthropicApi, startAnthropicApi, type Turn } from "./fixtures/anthropic-api";
import { compiledClis, runCompiled } from "./support/cli";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { freePort } from "./support/process";
import { realClaude } from "./support/real-claude";

const TOKEN = "loop-router-token";
const open: Array<{ stop(): unknown }> = [];
afterAll(async () => {
  for (const o of open.splice(0)) await o.stop();
});

async function startRouter(home: string, vault: string, port: number): Promise<MainProcess> {
  const main = await startMain(
    ["--only", "router", "--vault", vault],
    { HOME: home, KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0", PORT_BRAIN_API: String(port) },
    { expect: ["router"] },
  );
  open.push(main);
  return main;
}

const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(body) });

/** The marker journal's records (every accepted marker, once each). */
function journal(vault: string): Array<Record<string, any>> {
  const dir = join(vault, "brain-feed", "markers");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) =>
    readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  );
}

interface Session {
  home: string;
  env: Record<string, string>;
  cwd: string;
}

/** A temp HOME with a user's own settings, and router-cli installed client-only into it. */
async function installedSession(api: AnthropicApi, brainUrl: string): Promise<Session & { userSettings: string }> {
  const claude = realClaude({ baseUrl: api.url });
  const userSettings = `{\n    "model": "sonnet",\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}\n}\n`;
  writeFileSync(join(claude.home, ".claude", "settings.json"), userSettings);
  const r = await runCompiled("router-cli", ["install", "--brain-url", brainUrl, "--token", TOKEN], { env: { HOME: claude.home } });
  expect(r.code).toBe(0);
  const cwd = tempDir("loop-cwd");
  return { home: claude.home, env: claude.env, cwd, userSettings };
}

async function runClaude(s: Session, prompt: string, extra: string[] = []): Promise<{ sessionId: string; out: string }> {
  const proc = Bun.spawn(
    [
      realClaude({ baseUrl: "x", home: s.home }).binary,
      "-p",
      prompt,
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "bypassPermissions",
      ...extra,
    ],
    {
      cwd: s.cwd,
      env: s.env,
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`claude exited ${code}:\n${err}\n${out}`);
  const result = out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .find((l) => l.type === "result");
  return { sessionId: result.session_id, out };
}

const reply = (text: string): Turn => ({ content: [{ type: "text", text }] });
const bodyText = (body: unknown) => JSON.stringify(body);

beforeAll(async () => {
  await compiledClis();
}, 120_000);

describe("a Claude Code session on an installed machine", () => {
  it("starts with the feed, sees a critical signal on its next prompt, and leaves its inline lesson in the vault once with its time", async () => {
    const routerHome = tempDir("loop-router-home");
    const vault = join(tempDir("loop-vault"), "vault");
    const router = await startRouter(routerHome, vault, freePort());
    const url = router.routerUrl!;
    expect(
      (await post(url, "/marker", { type: "lesson", content: "Earlier lesson: pin base image digests, tags move.", attrs: { source: "retro" } })).status,
    ).toBe(201);

    const lesson = "Inline lesson from the agent: run migrations before the deploy.";
    const api = await startAnthropicApi({
      script: [reply(`Done.\n\n<!-- @lesson title="migrations first" -->\n${lesson}\n<!-- @/lesson -->`), reply("Second answer.")],
    });
    open.push(api);
    const s = await installedSession(api, url);

    const first = await runClaude(s, "first task");
    // The first request the session sends carries the lesson posted before it started.
    expect(bodyText(api.scriptedRequests()[0]!.body)).toContain("Earlier lesson: pin base image digests");

    // The inline lesson is in the vault after the turn, once, at the time of the reply.
    const recorded = journal(vault).filter((r) => r.content === lesson);
    expect(recorded).toHaveLength(1);
    const transcriptDir = join(s.home, ".claude", "projects");
    const transcript = readdirSync(transcriptDir)
      .map((d) => join(transcriptDir, d, `${first.sessionId}.jsonl`))
      .find(existsSync)!;
    const entry = readFileSync(transcript, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((e) => e.type === "assistant" && JSON.stringify(e).includes(lesson));
    expect(new Date(recorded[0]!.ts).getTime()).toBe(new Date(entry.timestamp).getTime());
    expect(recorded[0]!.session_id).toBe(first.sessionId);

    // A critical signal raised mid-session is in the next prompt's request.
    expect(
      (
        await post(url, "/marker", {
          type: "signal",
          content: "Production database is read-only.",
          attrs: { severity: "critical", title: "prod db read-only" },
        })
      ).status,
    ).toBe(201);
    await runClaude(s, "second task", ["--resume", first.sessionId]);
    const second = api.scriptedRequests()[1]!.body;
    expect(bodyText(second.messages.at(-1))).toContain("prod db read-only");
    // The first request of the session did not have it (it came after).
    expect(bodyText(api.scriptedRequests()[0]!.body)).not.toContain("prod db read-only");
    // Harvesting the same transcript again records nothing twice.
    expect(journal(vault).filter((r) => r.content === lesson)).toHaveLength(1);

    // Uninstall leaves the user's own settings byte for byte.
    const u = await runCompiled("router-cli", ["uninstall"], { env: { HOME: s.home } });
    expect(u.code).toBe(0);
    expect(readFileSync(join(s.home, ".claude", "settings.json"), "utf8")).toBe(s.userSettings);
    expect(existsSync(join(s.home, ".claude", "CLAUDE.md"))).toBe(false);
  }, 180_000);

  it("with the router down, the inline lesson waits in the outbox and router-cli sync delivers it once", async () => {
    const routerHome = tempDir("loop-router-home");
    const vault = join(tempDir("loop-vault"), "vault");
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const lesson = "Lesson written while the brain was down.";
    const api = await startAnthropicApi({ script: [reply(`<!-- @lesson -->\n${lesson}\n<!-- @/lesson -->\nOK.`)] });
    open.push(api);
    const s = await installedSession(api, url);

    const started = Date.now();
    await runClaude(s, "work offline");
    const outbox = join(s.home, ".router", "outbox");
    const waiting = readdirSync(outbox).filter((f) => f.endsWith(".json"));
    expect(waiting).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(outbox, waiting[0]!), "utf8")).content).toBe(lesson);

    await startRouter(routerHome, vault, port);
    const sync = await runCompiled("router-cli", ["sync"], { env: { HOME: s.home } });
    expect(sync.code).toBe(0);
    const again = await runCompiled("router-cli", ["sync"], { env: { HOME: s.home } });
    expect(again.code).toBe(0);
    const recorded = journal(vault).filter((r) => r.content === lesson);
    expect(recorded).toHaveLength(1);
    // Its time is the reply's, not the sync's.
    expect(new Date(recorded[0]!.ts).getTime()).toBeGreaterThanOrEqual(started - 1000);
    expect(new Date(recorded[0]!.ts).getTime()).toBeLessThan(new Date(recorded[0]!.received_at).getTime());
  }, 180_000);
});
