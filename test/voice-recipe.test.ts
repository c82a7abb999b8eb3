// docs/chat-clients.md's recipe for trying team chat and voice locally stays true: its commands
// are read from the page and run as written (on free ports, in a temporary folder, the fixture
// agent standing in for `claude` as the page suggests), and what the page says you will see
// is what the fixture bot platform prints.
import { afterAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { REPO, tempDir } from "./support/main-process";
import { deadPort } from "./support/service-cli";
import { until } from "./support/until";

setDefaultTimeout(90_000);

const page = readFileSync(join(REPO, "docs", "chat-clients.md"), "utf8");
const recipe = page.slice(page.indexOf("### Trying team chat and voice locally"));
/** The fenced sh blocks of the recipe, in order. */
const blocks = [...recipe.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => (m[1] ?? "").replace(/^ {3}/gm, ""));

const running: Subprocess[] = [];
afterAll(() => {
  for (const p of running) p.kill();
});

/** Spawns a command line of the recipe and collects its output. */
function run(argv: string[], env: Record<string, string>, cwd: string) {
  const proc = Bun.spawn(argv, { cwd, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  running.push(proc);
  let out = "";
  const pump = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) out += new TextDecoder().decode(chunk);
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  return { proc, output: () => out };
}

describe("docs/chat-clients.md: trying team chat and voice locally", () => {
  it("runs as written: a typed /voice message is answered in text and speech, a voice note is transcribed", async () => {
    expect(blocks).toHaveLength(3);
    const dir = tempDir("voice-recipe");
    const hub = join(dir, "hub");
    const ports: Record<string, string> = { "8310": deadPort(), "8320": deadPort(), "8200": deadPort() };
    const local = (text: string) => text.replaceAll("/tmp/hub", hub).replace(/\b(8310|8320|8200)\b/g, (p) => ports[p]!);
    const env = { PATH: process.env.PATH ?? "", HOME: dir };

    // 1. The hub, with the page's own shell lines.
    const made = Bun.spawnSync(["bash", "-e", "-c", local(blocks[0]!)], { cwd: dir, env });
    expect(made.exitCode).toBe(0);

    // 2. The fixtures, each as the page starts it.
    const [voiceLine, platformLine] = blocks[1]!
      .trim()
      .split("\n")
      .map((l) => local(l).split(/\s+/));
    const voice = run(voiceLine!, env, REPO);
    // The platform saves audio replies to its current folder: it runs in the temporary one.
    const platform = run(
      platformLine!.map((w) => (w.startsWith("test/") ? join(REPO, w) : w)),
      env,
      dir,
    );
    await until(() => voice.output().includes("voice backend on") && platform.output().includes("then type a message"), {
      ms: 30_000,
      what: () => voice.output() + platform.output(),
    });

    // 3. The orchestrator, with the page's variables (and the fixture agent, as it suggests).
    const words = local(blocks[2]!).replace(/\\\n/g, " ").trim().split(/\s+/);
    const assignments = Object.fromEntries(words.filter((w) => /^[A-Z_]+=/.test(w)).map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]));
    const command = words.filter((w) => !/^[A-Z_]+=/.test(w));
    expect(command).toEqual(["bun", "src/main.ts", "--only", "orchestrator"]);
    // The platform printed the same TEAMCHAT_* settings the page lists.
    for (const [k, v] of Object.entries(assignments)) if (k.startsWith("TEAMCHAT_")) expect(platform.output()).toContain(`${k}=${v}`);
    const fakeClaude = /`SERVICE_CLAUDE_BINARY=\$PWD\/(\S+)`/.exec(recipe)?.[1];
    expect(fakeClaude).toBe("test/fixtures/fake-claude");
    const orchestrator = run(command, { ...env, ...assignments, SERVICE_PORT: ports["8200"]!, SERVICE_CLAUDE_BINARY: join(REPO, fakeClaude!) }, REPO);
    await until(() => orchestrator.output().includes("job orchestrator on"), { ms: 30_000, what: orchestrator.output });

    // 4. What the page says you will see.
    const stdin = platform.proc.stdin as import("bun").FileSink;
    stdin.write("/voice what failed?\n");
    stdin.flush();
    await until(() => platform.output().includes("saved to"), { ms: 30_000, what: platform.output });
    expect(platform.output()).toMatch(/bot: \(audio, audio\/ogg\) saved to \S+reply-1\.ogg/);
    expect(readFileSync(join(dir, "reply-1.ogg")).subarray(0, 4).toString()).toBe("OggS");
    // The backend prints its requests as it takes them (every 100 ms): wait for the line.
    await until(() => voice.output().includes("POST /speak:"), { ms: 10_000, what: voice.output });

    writeFileSync(join(dir, "note.ogg"), new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0x00, 0x02, 42, 42]));
    stdin.write("@note.ogg\n");
    stdin.flush();
    await until(() => platform.output().includes("bot: **Heard:** what failed on main"), { ms: 30_000, what: platform.output });
    await until(() => voice.output().includes("POST /stt: audio audio/ogg 8 bytes"), { ms: 10_000, what: voice.output });
  });
});
