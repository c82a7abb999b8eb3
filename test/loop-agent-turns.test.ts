// Agent-mode turns join the loop (issue 16 part 3) without the router's token in the agent's
// reach: each turn runs with a settings file of its own holding a token minted for that turn
// (common/scoped-token.ts), and the file is gone when the turn ends.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { scopedTokenVerifier } from "../src/common/scoped-token";
import { AGENT, type AgentModeServer, flagOf, makeHub, recordedStarts, startAgentModeServer, tempHome } from "./support/agent-mode";
import { until } from "./support/until";

const ROUTER_TOKEN = "agent-turns-router-token";
let s: AgentModeServer;
let home: { home: string; cleanup(): Promise<void> };
const record = () => join(home.home, "claude-record.jsonl");

beforeAll(async () => {
  home = await tempHome("loop-turns-");
  const hubUrl = await makeHub(join(home.home, "hub"));
  s = await startAgentModeServer({
    home: home.home,
    hubUrl,
    kv: "file",
    // The service's own environment holds the token too (as in the one-process stack): the agent must not inherit it.
    agentEnv: { ...process.env, KB_ROUTER_TOKEN: ROUTER_TOKEN, FAKE_CLAUDE_RECORD: record() },
    // A router that is not there: the hooks would buffer; what matters here is what the agent holds.
    configEnv: { ROUTER_URL: "http://127.0.0.1:9", KB_ROUTER_TOKEN: ROUTER_TOKEN, ROUTER_CLI_BINARY: "/usr/local/bin/router-cli" },
  });
});

afterAll(async () => {
  await s?.close();
  await home?.cleanup();
});

describe("an agent-mode turn with a router known", () => {
  it("runs with a settings file of its own whose token is scoped to that turn, and never sees the router's token", async () => {
    for (const text of ["one", "two"]) {
      const res = await s.call("/v1/chat/completions", {
        json: { model: AGENT, messages: [{ role: "user", content: text }] },
        headers: { "x-conversation-id": crypto.randomUUID() },
      });
      expect(res.status).toBe(200);
    }
    const starts = await recordedStarts(record());
    expect(starts).toHaveLength(2);
    const tokens = starts.map((st) => {
      // Neither in its environment (recorded: KB_ROUTER_*, SERVICE_*, …) nor in its settings.
      expect(JSON.stringify(st)).not.toContain(ROUTER_TOKEN);
      expect(st.env.KB_ROUTER_TOKEN).toBeUndefined();
      const settings = JSON.parse(st.settings!);
      expect(settings.hooks.SessionStart[0].hooks[0].command).toBe("/usr/local/bin/router-cli hook session-start");
      expect(settings.env.BRAIN_URL).toBe("http://127.0.0.1:9");
      return settings.env.KB_ROUTER_TOKEN as string;
    });
    expect(tokens[0]).not.toBe(tokens[1]);
    const verifier = scopedTokenVerifier([ROUTER_TOKEN]);
    for (const t of tokens) {
      const v = verifier.verify(t);
      if (!v.ok) throw new Error(`not a scoped token of the router's: ${v.reason}`);
      expect(v.claims.sub).toStartWith(`turn:${AGENT}:`);
      // It lasts the turn's timeout (SERVICE_CLAUDE_TIMEOUT, 3600 s by default) and a minute for the last Stop hook.
      expect(v.claims.exp - v.claims.iat).toBe(3600 + 60);
      expect(verifier.check(t, "POST", "/marker").ok).toBe(true);
      expect(verifier.check(t, "POST", "/ingest").ok).toBe(false);
    }
    // Each turn's settings (and its token) went with the turn.
    const paths = starts.map((st) => flagOf(st.argv, "--settings")!);
    expect(new Set(paths).size).toBe(2);
    await until(() => paths.every((p) => !existsSync(p)), 5_000);
  });
});
