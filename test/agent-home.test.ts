// The agent cannot read the service's secrets through its home (issue 14, part 8), against the
// real process: a job's and a chat turn's agent runs with a HOME of its own, where `~/.router/.env`
// and `~/.service/config.yml` are not the service's, and finds the CLI's credentials file that
// `claude login` left in the service's ~/.claude/.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT, makeHub } from "./support/agent-mode";
import { tempDir } from "./support/main-process";
import { FIXTURES, finished, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";

const ROUTER_SECRET = "kb-router-secret-in-dotenv";
const CONFIG_SECRET = "api-key-in-config-yml";
const CREDENTIALS = JSON.stringify({ claudeAiOauth: { accessToken: "sk-ant-oat-test", refreshToken: "rt", expiresAt: 4102444800000 } });

/** What the agent's tools see under `~`, one JSON line per start. */
function probeAgent(home: string): { binary: string; seen(): Array<Record<string, string>> } {
  const out = join(home, "agent-view.jsonl");
  const binary = join(home, "probe-claude");
  writeFileSync(
    binary,
    `#!/bin/sh
router=$(cat "$HOME/.router/.env" 2>/dev/null)
config=$(cat "$HOME/.service/config.yml" 2>/dev/null)
creds=$(cat "$HOME/.claude/.credentials.json" 2>/dev/null)
bun -e 'console.log(JSON.stringify({home: process.argv[1], router: process.argv[2], config: process.argv[3], creds: process.argv[4]}))' "$HOME" "$router" "$config" "$creds" >> ${JSON.stringify(out)}
exec ${JSON.stringify(join(FIXTURES, "fake-claude"))} "$@"
`,
  );
  chmodSync(binary, 0o755);
  return {
    binary,
    seen: () =>
      readFileSync(out, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

describe("the agent's home", () => {
  let o: Orchestrator;
  let home = "";
  let probe: ReturnType<typeof probeAgent>;
  beforeAll(async () => {
    home = tempDir("agent-home");
    mkdirSync(join(home, ".router"), { recursive: true });
    writeFileSync(join(home, ".router", ".env"), `KB_ROUTER_TOKEN=${ROUTER_SECRET}\n`);
    mkdirSync(join(home, ".service"), { recursive: true });
    writeFileSync(join(home, ".service", "config.yml"), `server:\n  api_keys: [${CONFIG_SECRET}]\n`);
    mkdirSync(join(home, ".claude"), { recursive: true });
    writeFileSync(join(home, ".claude", ".credentials.json"), CREDENTIALS);
    probe = probeAgent(home);
    o = await startOrchestrator({
      home,
      env: {
        SERVICE_CLAUDE_BINARY: probe.binary,
        SERVICE_HUB_URL: await makeHub(join(home, "hub")),
        HUB_AGENT: AGENT,
        SERVICE_CLONE_ROOT: join(home, "clones"),
      },
    });
  });
  afterAll(() => o.stop());

  const expectOwnHome = (view: Record<string, string>) => {
    expect(view.home).toBe(join(home, ".service", "agent-home"));
    expect(view.router).toBe("");
    expect(view.config).toBe("");
    expect(JSON.stringify(view)).not.toContain(ROUTER_SECRET);
    expect(JSON.stringify(view)).not.toContain(CONFIG_SECRET);
    // What `claude login` left for the service's account, and only that.
    expect(view.creds).toBe(CREDENTIALS);
  };

  it("a job's agent has its own HOME: no ~/.router/.env or ~/.service/config.yml, the CLI credentials file only", async () => {
    const job = await o.submit({ task: "look around" });
    expect((await o.until(job.id, finished)).status).toBe("succeeded");
    expectOwnHome(probe.seen().at(-1)!);
  });

  it("a chat turn's agent too", async () => {
    const res = await o.call("/v1/chat/completions", { method: "POST", json: { model: AGENT, messages: [{ role: "user", content: "hi" }] } });
    expect(res.status).toBe(200);
    expectOwnHome(probe.seen().at(-1)!);
  });

  it("keeps the credentials file private (0600)", () => {
    expect(statSync(join(home, ".service", "agent-home", ".claude", ".credentials.json")).mode & 0o777).toBe(0o600);
  });
});
