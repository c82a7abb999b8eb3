// Issue 20's read endpoints on a running router, one request at a time from this process through
// RouterClient: GET /notes (listing, rotating filters), GET /notes/{path} and GET
// /notes/{path}/context at depth 2, each beside GET /health timed the same way (the floor: the
// HTTP round trip, auth and the client's own cost, so what a figure adds over it is the
// endpoint's work).
import type { RecentInput, RouterClient } from "../../../src/router/client.ts";
import { median } from "./stats.ts";

export interface NotesLatency {
  healthP50: number;
  listP50: number;
  getP50: number;
  contextP50: number;
  /** Median notes a depth-2 context reached (returned + left out). */
  contextReached: number;
  /** Median notes a depth-2 context returned with bodies. */
  contextReturned: number;
  failures: number;
}

export async function timeNotesEndpoints(client: RouterClient, paths: string[], samples = 200): Promise<NotesLatency> {
  let failures = 0;
  const time = async <T>(calls: Array<() => Promise<T>>, onBody?: (b: T) => void): Promise<number> => {
    const ms: number[] = [];
    for (let i = 0; i < samples + 20; i++) {
      const t0 = performance.now();
      const body = await calls[i % calls.length]!().catch(() => undefined);
      const took = performance.now() - t0;
      if (body === undefined) failures++;
      if (i >= 20) ms.push(took); // the first 20 warm up
      if (i >= 20 && onBody && body !== undefined) onBody(body);
    }
    return median(ms);
  };
  const lists: RecentInput[] = [
    { limit: 50 },
    { limit: 50, since: "2024-06-01T00:00:00Z" },
    { limit: 50, prefix: "raw/databases/" },
    { limit: 50, tag: "incident" },
    { limit: 50, producer: "raw" },
  ];
  const reached: number[] = [];
  const returned: number[] = [];
  return {
    healthP50: await time([() => client.health()]),
    listP50: await time(lists.map((l) => () => client.recent(l))),
    getP50: await time(paths.map((p) => () => client.note(p))),
    contextP50: await time(
      paths.map((p) => () => client.context(p, { depth: 2 })),
      (b) => {
        reached.push(b.notes.length + b.left_out.length);
        returned.push(b.notes.length);
      },
    ),
    contextReached: median(reached),
    contextReturned: median(returned),
    failures,
  };
}
