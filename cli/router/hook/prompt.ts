// UserPromptSubmit: signals at or above AMYGDALA_MIN_SEVERITY raised since the session last
// looked (the cursor moves past everything seen), and the vault's notes that bear on the prompt
// (recall.ts: searched with the prompt and the session's repository, above a threshold, within
// BRAIN_RECALL_MAX_CHARS), each note once per session. A job's or conversation's first turn
// also carries the notes the orchestrator chose for its task (BRAIN_RECALL_FILE). Both calls
// share the run's budget; whichever does not come in time is left out.
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { recall, render } from "../../../src/router/recall/recall";
import { additionalContext, type HookInput, type HookSettings, loadState, routerClient, type SessionState, saveState, warn } from "./_hook";
import { renderSignals } from "./signals";

export async function prompt(input: HookInput, s: HookSettings, deadline: AbortSignal): Promise<string | undefined> {
  const wantsRecall = s.recall.enabled && typeof input.prompt === "string" && input.prompt.trim() !== "";
  if (!s.signalsEnabled && !wantsRecall && !s.recallFile) return undefined;
  const state = await loadState(s, input.session_id);
  const router = routerClient(s, deadline);
  const [signals, found, chosen] = await Promise.allSettled([
    s.signalsEnabled ? router.signalsSince(state.signal_cursor) : Promise.resolve(undefined),
    wantsRecall
      ? recall(router, { prompt: input.prompt!, hint: s.repoHint ?? repoAround(input.cwd), given: new Set(state.recalled ?? []) }, s.recall)
      : Promise.resolve(undefined),
    s.recallFile && state.recall_file !== s.recallFile ? readChosen(s.recallFile) : Promise.resolve(undefined),
  ]);
  const next: SessionState = { ...state };
  const parts: string[] = [];
  if (signals.status === "fulfilled" && signals.value) {
    next.signal_cursor = signals.value.lastEventId;
    const text = renderSignals(signals.value.events, s.minSeverity);
    if (text) parts.push(text);
  } else if (signals.status === "rejected") warn(`signals did not come (${s.baseUrl}): ${(signals.reason as Error).message}`);
  const given = new Set(state.recalled ?? []);
  if (chosen.status === "fulfilled" && chosen.value) {
    next.recall_file = s.recallFile;
    if (chosen.value.text) parts.push(chosen.value.text);
    for (const k of chosen.value.keys) given.add(k);
  }
  if (found.status === "fulfilled" && found.value?.text) {
    // What the orchestrator already chose for this turn is not repeated.
    const fresh = found.value.notes.filter((n) => !given.has(n.key));
    if (fresh.length === found.value.notes.length) parts.push(found.value.text);
    else if (fresh.length > 0) parts.push(render(fresh, s.recall.maxChars).text);
    for (const n of fresh) given.add(n.key);
  } else if (found.status === "rejected") warn(`recall did not come (${s.baseUrl}): ${(found.reason as Error).message}`);
  next.recalled = [...given];
  if (JSON.stringify(next) !== JSON.stringify(state)) await saveState(s, input.session_id, next);
  return parts.length ? additionalContext("UserPromptSubmit", parts.join("\n\n")) : undefined;
}

/** The orchestrator's choice for this turn: `{text, keys}` (job-loop.ts writes it beside the turn's settings). */
async function readChosen(path: string): Promise<{ text: string; keys: string[] } | undefined> {
  try {
    const v = JSON.parse(await Bun.file(path).text()) as { text?: unknown; keys?: unknown };
    return { text: typeof v.text === "string" ? v.text : "", keys: Array.isArray(v.keys) ? v.keys.filter((k): k is string => typeof k === "string") : [] };
  } catch {
    return undefined;
  }
}

/** The name of the git checkout holding `cwd` (its top directory's name), if any. */
function repoAround(cwd: string | undefined): string | undefined {
  let dir = cwd;
  for (let i = 0; dir && i < 40; i++) {
    if (existsSync(join(dir, ".git"))) return basename(dir);
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}
