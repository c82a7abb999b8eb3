// The router's SQLite index builds its searches' champion lists in a worker thread (issue 21,
// part 3): a search whose list is not built yet answers with the full query at once, and the
// list, built off the event loop, answers the searches after it — with the same hits.
import { describe, expect, it } from "bun:test";
import type { SqliteIndexStore } from "../src/router/index/sqlite/store";
import { useTestRouters } from "./support/router-runtime";

const router = useTestRouters();

describe("the router's search lists", () => {
  it("are built in a worker: the first search answers with the full query, later ones from the list, with the same hits", async () => {
    const r = await router();
    for (let i = 0; i < 12; i++) {
      const res = await r.call("/ingest", { content: `# Runbook ${i}\n\n${"canary ".repeat(i + 1)}rollout steps for service ${i}.` });
      expect(res.status).toBe(201);
    }
    const index = r.runtime.deps.index as SqliteIndexStore;
    const first = await r.call("/search", { query: "canary", limit: 5 });
    const second = await r.call("/search", { query: "canary", limit: 5 });
    // Nothing was built in the router's own thread: the list was sent to the worker.
    expect(index.champions!.counts.built).toBe(0);
    expect(index.champions!.counts.answered).toBe(0);
    await index.champions!.idle();
    expect(index.champions!.counts.built).toBe(1);
    const third = await r.call("/search", { query: "canary", limit: 5 });
    expect(index.champions!.counts.answered).toBe(1);
    const paths = (res: typeof first) => (res.body.hits as Array<{ path: string }>).map((h) => h.path);
    expect(paths(third)).toEqual(paths(first));
    expect(paths(second)).toEqual(paths(first));
    expect(paths(first)[0]).toContain("runbook-11");
  });
});
