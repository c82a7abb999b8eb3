// `router-cli hook <event>`: read the hook input, do the event's work within the time budget,
// print Claude Code's answer (if any), exit 0. A hook never fails or blocks the session: the
// router being down, slow or refusing costs at most BRAIN_HOOK_TIMEOUT_MS, then the session
// goes on (markers wait in the outbox).

import { type HookInput, type HookSettings, hookSettings, readHookInput, warn } from "./_hook";
import type { HookEvent } from "./events";

type Handler = (input: HookInput, s: HookSettings, deadline: AbortSignal) => Promise<string | undefined>;

const handlers: Record<HookEvent, () => Promise<Handler>> = {
  "session-start": () => import("./session-start").then((m) => m.sessionStart),
  prompt: () => import("./prompt").then((m) => m.prompt),
  stop: () => import("./stop").then((m) => m.stop),
};

export async function runHook(event: HookEvent): Promise<never> {
  const s = await hookSettings();
  const deadline = AbortSignal.timeout(s.timeoutMs);
  // A backstop: the network calls end at the deadline; whatever still hangs after it (a slow
  // disk, a stuck stdin) is left behind. Stop's buffering to the outbox comes before it.
  const hardStop = setTimeout(() => {
    warn(`${event}: gave up after ${s.timeoutMs} ms`);
    process.exit(0);
  }, s.timeoutMs + 500);
  try {
    const [input, handler] = await Promise.all([readHookInput(), handlers[event]()]);
    const out = await handler(input, s, deadline);
    // console.log: written synchronously, so the exit below cannot cut a long feed short.
    if (out) console.log(out);
  } catch (err) {
    warn(`${event}: ${(err as Error).message}`);
  }
  clearTimeout(hardStop);
  process.exit(0);
}
