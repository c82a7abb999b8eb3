// Issue 20's read endpoints on a running router, one request at a time from this process:
// GET /notes (listing, rotating filters), GET /notes/{path} and GET /notes/{path}/context at
// depth 2, each beside GET /health timed the same way (the floor: the HTTP round trip, auth
// and this client's own cost, so what a figure adds over it is the endpoint's work).
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

export async function timeNotesEndpoints(base: string, headers: Record<string, string>, paths: string[], samples = 200): Promise<NotesLatency> {
  let failures = 0;
  // biome-ignore lint/suspicious/noExplicitAny: the caller checks the JSON body it asked for
  const time = async (urls: string[], onBody?: (b: any) => void): Promise<number> => {
    const ms: number[] = [];
    for (let i = 0; i < samples + 20; i++) {
      const t0 = performance.now();
      const res = await fetch(`${base}${urls[i % urls.length]}`, { headers });
      const body = await res.text();
      const took = performance.now() - t0;
      if (res.status !== 200) failures++;
      if (i >= 20) ms.push(took); // the first 20 warm up
      if (i >= 20 && onBody && res.status === 200) onBody(JSON.parse(body));
    }
    return median(ms);
  };
  const enc = (p: string) => p.split("/").map(encodeURIComponent).join("/");
  const lists = [
    "/notes?limit=50",
    "/notes?limit=50&since=2024-06-01T00:00:00Z",
    "/notes?limit=50&prefix=raw/databases/",
    "/notes?limit=50&tag=incident",
    "/notes?limit=50&producer=raw",
  ];
  const reached: number[] = [];
  const returned: number[] = [];
  return {
    healthP50: await time(["/health"]),
    listP50: await time(lists),
    getP50: await time(paths.map((p) => `/notes/${enc(p)}`)),
    contextP50: await time(
      paths.map((p) => `/notes/${enc(p)}/context?depth=2`),
      (b: { notes: unknown[]; left_out: unknown[] }) => {
        reached.push(b.notes.length + b.left_out.length);
        returned.push(b.notes.length);
      },
    ),
    contextReached: median(reached),
    contextReturned: median(returned),
    failures,
  };
}
