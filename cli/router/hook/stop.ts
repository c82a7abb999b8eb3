// Stop: the markers of the turn that just ended (inline blocks in the transcript since the
// last Stop) go to POST /marker with their original time and a stable idempotency key; when the
// router does not take them they wait in the outbox, and `router-cli sync` (or the next Stop)
// delivers them once. The outbox itself is replayed while the router answers.
import { join } from "node:path";
import { ApiError, type MarkerInput } from "../../../src/router/client";
import { type HarvestedMarker, harvestTranscript } from "../../../src/router/markers/transcript";
import { bufferMarker, ReplayInterrupted, replayOutbox } from "../../../src/router/outbox/outbox";
import { type HookInput, type HookSettings, loadState, routerClient, saveState, warn } from "./_hook";

export async function stop(input: HookInput, s: HookSettings, deadline: AbortSignal): Promise<string | undefined> {
  const state = await loadState(s, input.session_id);
  let markers: HarvestedMarker[] = [];
  if (input.transcript_path) {
    const from = state.transcript_path === input.transcript_path ? (state.transcript_offset ?? 0) : 0;
    try {
      const read = await harvestTranscript(input.transcript_path, from, input.session_id);
      markers = read.markers;
      // The offset moves on only once every marker is posted or buffered (below).
      state.transcript_path = input.transcript_path;
      state.transcript_offset = read.offset;
    } catch (err) {
      warn(`transcript ${input.transcript_path}: ${(err as Error).message}`);
    }
  }
  const router = routerClient(s, deadline);
  let routerAnswers = true;
  for (const m of markers) {
    if (routerAnswers) {
      try {
        // The router judges the kind an inline block named: an unknown one is refused (400), below.
        await router.marker({ type: m.type as MarkerInput["type"], content: m.content, attrs: m.attrs }, { idempotencyKey: m.idempotency_key });
        continue;
      } catch (err) {
        if (err instanceof ApiError) {
          const why = `${err.status} ${err.code}: ${err.message.slice(0, 200)}`;
          // A refusal of the marker itself (bad type, too long) will not change on a retry.
          if (err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 408 && err.status !== 429) {
            warn(`the router refused a ${m.type} marker: ${why}`);
            continue;
          }
          warn(`the router did not take a ${m.type} marker (${why}): it waits in the outbox`);
        } else warn(`the router does not answer at ${s.baseUrl} (${(err as Error).message}): markers wait in ${s.outbox}`);
      }
      routerAnswers = false;
    }
    await bufferMarker(s.outbox, { type: m.type, content: m.content, attrs: m.attrs, session_id: m.attrs.session_id, idempotency_key: m.idempotency_key });
  }
  await saveState(s, input.session_id, state);
  if (routerAnswers && !deadline.aborted) {
    const home = join(s.home, ".router");
    await replayOutbox(router, { dirs: [s.outbox], sent: join(home, "sent"), rejected: join(home, "rejected") }).catch((err) => {
      if (!(err instanceof ReplayInterrupted)) throw err;
    });
  }
  return undefined;
}
