// UserPromptSubmit: signals at or above AMYGDALA_MIN_SEVERITY raised since the session last
// looked, as additional context; the cursor moves past everything seen.
import { additionalContext, type HookInput, type HookSettings, loadState, routerClient, saveState, warn } from "./_hook";
import { renderSignals } from "./signals";

export async function prompt(input: HookInput, s: HookSettings, deadline: AbortSignal): Promise<string | undefined> {
  if (!s.signalsEnabled) return undefined;
  const state = await loadState(s, input.session_id);
  try {
    const { events, lastEventId: cursor } = await routerClient(s, deadline).signalsSince(state.signal_cursor);
    if (cursor !== state.signal_cursor) await saveState(s, input.session_id, { ...state, signal_cursor: cursor });
    const text = renderSignals(events, s.minSeverity);
    return text ? additionalContext("UserPromptSubmit", text) : undefined;
  } catch (err) {
    warn(`signals did not come (${s.baseUrl}): ${(err as Error).message}`);
    return undefined;
  }
}
