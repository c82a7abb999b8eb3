// What the three Claude Code hooks share (`router-cli hook session-start | prompt | stop`):
// the hook input on stdin, where the router is, one time budget for the whole run, the
// per-session state file, and the JSON answer Claude Code reads. Kept free of citty and
// consola: a hook runs on every prompt, so it loads only what it uses (the router's client
// library is a thin fetch wrapper; its types come from the routes as type-only imports).
// Reads go through Bun.file, and node:fs/promises loads only when a hook writes its state:
// loading them costs a hook about half a millisecond of CPU.
import { homedir } from "node:os";
import { join } from "node:path";
// node:util's parseEnv reads the same syntax as the dotenv package, without loading it on every hook.
import { parseEnv } from "node:util";
import { RouterClient } from "../../../src/router/client";
import { RECALL_DEFAULTS, type RecallSettings } from "../../../src/router/recall/recall";

/** The fields of Claude Code's hook input that the hooks read (the rest is ignored). */
export interface HookInput {
  session_id?: string;
  transcript_path?: string;
  cwd?: string;
  hook_event_name?: string;
  source?: string;
  prompt?: string;
  stop_hook_active?: boolean;
}

export interface HookSettings {
  baseUrl: string;
  token?: string;
  outbox: string;
  /** The whole run's budget for the network (BRAIN_HOOK_TIMEOUT_MS, default 1000). */
  timeoutMs: number;
  feedMaxChars: number;
  signalsEnabled: boolean;
  minSeverity: string;
  stateDir: string;
  home: string;
  /** Recall at the prompt (BRAIN_RECALL_ENABLED, BRAIN_RECALL_MAX_CHARS, BRAIN_RECALL_MAX_NOTES, BRAIN_RECALL_MIN_COVERAGE). */
  recall: RecallSettings & { enabled: boolean };
  /** The repository the session works in, as a search hint (BRAIN_RECALL_REPO; else the git checkout around cwd). */
  repoHint?: string;
  /** Notes the orchestrator chose for a job's or conversation's first turn, for this prompt to carry (BRAIN_RECALL_FILE). */
  recallFile?: string;
}

/** The process env first, then ~/.router/.env (as every router-cli command reads them). */
export async function hookSettings(env: Record<string, string | undefined> = process.env): Promise<HookSettings> {
  const home = env.HOME || homedir();
  const text = await Bun.file(join(home, ".router", ".env"))
    .text()
    .catch(() => "");
  const file = parseEnv(text) as Record<string, string>;
  const get = (k: string) => env[k] || file[k] || undefined;
  const num = (k: string, dflt: number, min: number, max: number) => {
    const n = Number(get(k));
    return Number.isFinite(n) && n >= min && n <= max ? n : dflt;
  };
  return {
    baseUrl: (get("BRAIN_URL") ?? `http://localhost:${get("PORT_BRAIN_API") ?? "8103"}`).replace(/\/+$/, ""),
    token: get("KB_ROUTER_TOKEN"),
    outbox: get("BRAIN_OUTBOX") ?? join(home, ".router", "outbox"),
    timeoutMs: num("BRAIN_HOOK_TIMEOUT_MS", 1000, 50, 10_000),
    feedMaxChars: num("BRAIN_FEED_MAX_CHARS", 6000, 200, 200_000),
    signalsEnabled: !/^(0|false|no|off)$/i.test(get("AMYGDALA_ENABLED") ?? "1"),
    minSeverity: get("AMYGDALA_MIN_SEVERITY") ?? "high",
    stateDir: get("BRAIN_HOOK_STATE_DIR") ?? join(home, ".router", "sessions"),
    home,
    recall: {
      enabled: !/^(0|false|no|off)$/i.test(get("BRAIN_RECALL_ENABLED") ?? "1"),
      maxChars: num("BRAIN_RECALL_MAX_CHARS", RECALL_DEFAULTS.maxChars, 200, 50_000),
      maxNotes: num("BRAIN_RECALL_MAX_NOTES", RECALL_DEFAULTS.maxNotes, 0, 10),
      minCoverage: num("BRAIN_RECALL_MIN_COVERAGE", RECALL_DEFAULTS.minCoverage, 0, 1),
    },
    repoHint: env.BRAIN_RECALL_REPO || undefined,
    recallFile: env.BRAIN_RECALL_FILE || undefined,
  };
}

export async function readHookInput(): Promise<HookInput> {
  const text = await Bun.stdin.text().catch(() => "");
  if (!text.trim()) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" ? (v as HookInput) : {};
  } catch {
    return {};
  }
}

/** The router's typed client with the bearer; every call ends when the run's budget is spent. */
export function routerClient(s: HookSettings, deadline: AbortSignal): RouterClient {
  return new RouterClient({ baseUrl: s.baseUrl, token: s.token, timeoutMs: s.timeoutMs, signal: deadline });
}

/** Per-session state: the last signal event seen, how far the transcript was read, the notes recalled. */
export interface SessionState {
  signal_cursor?: number;
  transcript_path?: string;
  transcript_offset?: number;
  /** Keys of the notes already given to the session (recall.ts: a path, or path#entry of a lesson log). */
  recalled?: string[];
  /** The BRAIN_RECALL_FILE already carried (a resumed session's prompt does not carry it twice). */
  recall_file?: string;
}

const SAFE_ID = /^[A-Za-z0-9_.-]{1,128}$/;

const statePath = (s: HookSettings, sessionId: string | undefined) =>
  sessionId && SAFE_ID.test(sessionId) && !sessionId.startsWith(".") ? join(s.stateDir, `${sessionId}.json`) : undefined;

export async function loadState(s: HookSettings, sessionId: string | undefined): Promise<SessionState> {
  const path = statePath(s, sessionId);
  if (!path) return {};
  try {
    return JSON.parse(await Bun.file(path).text()) as SessionState;
  } catch {
    return {};
  }
}

export async function saveState(s: HookSettings, sessionId: string | undefined, state: SessionState): Promise<void> {
  const path = statePath(s, sessionId);
  if (!path) return;
  const { mkdir, rename, writeFile } = await import("node:fs/promises");
  await mkdir(s.stateDir, { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(state));
  await rename(temp, path);
}

/** The answer Claude Code adds to the model's context (SessionStart, UserPromptSubmit). */
export function additionalContext(event: "SessionStart" | "UserPromptSubmit", text: string): string {
  return JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } });
}

/** A hook never fails the session: what went wrong goes to stderr (Claude Code's debug log). */
export function warn(message: string): void {
  process.stderr.write(`router-cli hook: ${message}\n`);
}
