// SessionStart: the feed (GET /feed sized by BRAIN_FEED_MAX_CHARS) as additional context, and
// the session's signal cursor set to now, so the prompt hook shows only what is raised later.
import { additionalContext, type HookInput, type HookSettings, loadState, routerClient, saveState, warn } from "./_hook";
import { renderFeed } from "./feed-context";

export async function sessionStart(input: HookInput, s: HookSettings, deadline: AbortSignal): Promise<string | undefined> {
  const router = routerClient(s, deadline);
  const [feed, cursor] = await Promise.allSettled([
    router.feed({ maxChars: s.feedMaxChars }),
    s.signalsEnabled ? router.signalsSince().then((r) => r.lastEventId) : Promise.resolve(undefined),
  ]);
  if (cursor.status === "fulfilled" && cursor.value !== undefined) {
    const state = await loadState(s, input.session_id);
    // A resumed or compacted session keeps its cursor: what it missed still shows on the next prompt.
    if (state.signal_cursor === undefined) await saveState(s, input.session_id, { ...state, signal_cursor: cursor.value });
  } else if (cursor.status === "rejected") warn(`signals: ${(cursor.reason as Error).message}`);
  if (feed.status === "rejected") {
    warn(`the feed did not come (${s.baseUrl}): ${(feed.reason as Error).message}`);
    return undefined;
  }
  return additionalContext("SessionStart", renderFeed(feed.value, s.feedMaxChars));
}
