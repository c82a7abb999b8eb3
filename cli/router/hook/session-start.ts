// SessionStart: the feed (GET /feed sized by BRAIN_FEED_MAX_CHARS) as additional context, and
// the session's signal cursor set to now, so the prompt hook shows only what is raised later.
import type { Feed } from "../../../src/router/client";
import { additionalContext, loadState, routerFetch, saveState, warn, type HookInput, type HookSettings } from "./_hook";
import { renderFeed } from "./feed-context";
import { signalsSince } from "./signals";

export async function sessionStart(input: HookInput, s: HookSettings, deadline: AbortSignal): Promise<string | undefined> {
  const get = routerFetch(s, deadline);
  const [feed, cursor] = await Promise.allSettled([
    get(`/feed?max_chars=${s.feedMaxChars}`).then(async (res) => {
      if (!res.ok) throw new Error(`GET /feed answered ${res.status}`);
      return (await res.json()) as Feed;
    }),
    s.signalsEnabled ? signalsSince(get, undefined).then((r) => r.cursor) : Promise.resolve(undefined),
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
