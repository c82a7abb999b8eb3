// Tick benchmark (issue 6): a vault of generated raw notes (some carrying inline markers) and
// markers posted through POST /marker, then, against the real process:
//   - the first tick: wall time, the tick's own duration, peak and after RSS;
//   - a second tick with nothing new (target < 1 s);
//   - GET /feed over HTTP, sequential: p50 / p99;
//   - N concurrent GET /signal subscribers receiving one event: fan-out latency p50 / p99 / max
//     (from just before the signal's POST to each subscriber's receipt).
// Prints a table; asserts nothing.
//
//   bun run bench tick                       10k notes, 5k markers, 500 inline, 1,000 subscribers (~1–2 min)
//   bun scripts/bench/tick.ts --large        50k notes, 20k markers, 2k inline, 5,000 subscribers
//   bun scripts/bench/tick.ts --notes 2000 --markers 1000 --inline 100 --subscribers 200
import { appendFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type MarkerInput, RouterClient } from "../../src/router/client.ts";
import { tempDir } from "../../test/support/main-process.ts";
import { rssMb, startService } from "../../test/support/process.ts";
import { fillerParagraph, generateNote, pick, pickSkewed, prng, SERVICES, TOPICS, writeVault } from "../../test/support/vault-gen.ts";
import { percentile } from "./lib/stats.ts";
import { judged, num, table } from "./lib/table.ts";

const TOKEN = "bench-tick-token";
const TARGET = { secondTickMs: 1000 };

const { values: args } = parseArgs({
  options: {
    large: { type: "boolean", default: false },
    notes: { type: "string" },
    markers: { type: "string" },
    inline: { type: "string" },
    subscribers: { type: "string" },
    concurrency: { type: "string", default: "16" },
    keep: { type: "boolean", default: false },
  },
});
const size = (v: string | undefined, small: number, large: number) => (v !== undefined ? Number(v) : args.large ? large : small);
const settings = {
  notes: size(args.notes, 10_000, 50_000),
  markers: size(args.markers, 5_000, 20_000),
  inline: size(args.inline, 500, 2_000),
  subscribers: size(args.subscribers, 1_000, 5_000),
  concurrency: Number(args.concurrency),
  feedRequests: 300,
};

const log = (msg: string) => console.error(`[tick bench] ${msg}`);
/** Rows of the report; each is also logged as it is measured, so a run cut short still shows them. */
const rows: string[][] = [["measure", "value", "target"]];
const report = (row: string[]) => {
  rows.push(row);
  log(`${row[0]!.trim()}: ${row[1]}`);
};

// 1. The vault: generated raw notes, every (notes / inline)-th one carrying an inline marker.
const dir = tempDir("bench-tick");
const vault = join(dir, "vault");
const home = join(dir, "home");
log(`writing ${num(settings.notes)} notes to ${vault}`);
const written = writeVault(vault, settings.notes);
const every = settings.inline > 0 ? Math.max(1, Math.floor(settings.notes / settings.inline)) : 0;
let inlineWritten = 0;
for (let i = 0; every && i < settings.notes && inlineWritten < settings.inline; i += every) {
  const note = generateNote(1, i);
  appendFileSync(
    join(vault, note.path),
    `\n<!-- @lesson source=notes session_id=sess-inline-${i % 50} -->\nFrom ${note.title}: check the ${note.service} runbook before paging.\n<!-- @/lesson -->\n`,
  );
  inlineWritten++;
}

// 2. The router.
const started = await startService("router", {
  vault,
  env: {
    PATH: process.env.PATH,
    HOME: home,
    KB_ROUTER_TOKEN: TOKEN,
    TICK_INTERVAL_SECONDS: "0",
    LOG_LEVEL: "1",
  },
  logPath: join(dir, "router.log"),
  timeoutMs: 30_000,
});
const port = Number(new URL(started.url).port);
const client = new RouterClient({ baseUrl: started.url, token: TOKEN, timeoutMs: 10 * 60_000 });
// Stopped early (Ctrl-C, a timeout): take the router down with us.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void started.stop().finally(() => {
      if (!args.keep) rmSync(dir, { recursive: true, force: true });
      process.exit(130);
    });
  });
}

try {
  // 3. Markers over HTTP from 200 agent sessions, each a burst of up to 6 hours somewhere in
  // the last 13 days (busy sessions post more), about the services.
  const rng = prng(11);
  const now = Date.now();
  const sessions = Array.from({ length: 200 }, () => ({ start: now - 6 * 3_600_000 - Math.floor(rng() * 13 * 86_400_000), hours: 0.5 + rng() * 5.5 }));
  const bodies = Array.from({ length: settings.markers }, (_, i) => {
    const s = Math.floor(rng() ** 2 * sessions.length);
    const session = sessions[s]!;
    const r = rng();
    const type = (r < 0.55 ? "lesson" : r < 0.8 ? "milestone" : r < 0.92 ? "decision" : "signal") as MarkerInput["type"];
    const svc = pickSkewed(rng, SERVICES);
    const topic = pick(rng, TOPICS).name;
    const attrs: Record<string, string> = {
      source: "bench",
      session_id: `sess-${s}`,
      ts: new Date(session.start + Math.floor(rng() * session.hours * 3_600_000)).toISOString(),
    };
    if (type === "signal") attrs.severity = pick(rng, ["critical", "high", "medium", "medium", "low"]);
    if (type === "milestone" && rng() < 0.3) attrs.scope = svc;
    return { type, content: `${svc}: ${fillerParagraph(rng, topic, svc)} (#${i})`.slice(0, 600), attrs };
  });
  log(`posting ${num(settings.markers)} markers (concurrency ${settings.concurrency})`);
  const t0 = performance.now();
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: settings.concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const answer = await client.marker(body).then(
          (r) => (r.created ? undefined : "200 (not created)"),
          (err: Error) => err.message,
        );
        if (answer !== undefined) {
          failed++;
          if (failed <= 3) log(`POST /marker answered ${answer.slice(0, 300)}`);
        }
      }
    }),
  );
  const postSeconds = (performance.now() - t0) / 1000;
  report(["POST /marker", `${num(settings.markers / postSeconds)} markers/s (${num(postSeconds, 1)} s${failed ? `, ${failed} not 201` : ""})`, ""]);

  // 4. The first tick, with RSS sampled while it runs.
  const tick = async () => {
    let peak = rssMb(started.pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(started.pid))), 25);
    const t = performance.now();
    const record = await client.tick({ wait: true });
    const wall = performance.now() - t;
    clearInterval(sampler);
    if (record.status !== "succeeded") throw new Error(`tick ${record.status}: ${record.error_tail}`);
    // A succeeded tick has its counts, steps and duration.
    const done = { ...record, counts: record.counts ?? {}, phases_ms: record.phases_ms ?? {}, duration_ms: record.duration_ms ?? Number.NaN };
    return { wall, record: done, peak: Math.max(peak, rssMb(started.pid)) };
  };
  const rssBefore = rssMb(started.pid);
  log("first tick");
  const first = await tick();
  const c = first.record.counts;
  report(["first tick (wall)", `${num(first.wall)} ms (tick ${num(first.record.duration_ms)} ms)`, ""]);
  report([
    "  what it did",
    `${num(c.notes_scanned!)} files scanned, ${num(c.markers_harvested!)} inline markers, ${num(c.arc_items!)} arc items → ${num(c.arcs!)} arcs (${c.arcs_hot} hot, ${c.arcs_warm} warm), ${num(c.index_upserted!)} docs indexed`,
    "",
  ]);
  const phases = (p: Record<string, number>) =>
    Object.entries(p)
      .map(([k, v]) => `${k} ${num(v)}`)
      .join(", ");
  report(["  steps (ms)", phases(first.record.phases_ms), ""]);
  report(["  RSS before / peak / after", `${num(rssBefore)} / ${num(first.peak)} / ${num(rssMb(started.pid))} MB`, ""]);

  // 5. Nothing new.
  log("second tick (nothing new)");
  const second = await tick();
  report([
    "second tick, nothing new",
    judged(`${num(second.wall)} ms (tick ${num(second.record.duration_ms)} ms)`, second.wall < TARGET.secondTickMs),
    `< ${TARGET.secondTickMs} ms`,
  ]);
  report(["  steps (ms)", phases(second.record.phases_ms), ""]);

  // 6. GET /feed, sequential.
  log(`${settings.feedRequests} × GET /feed`);
  const feedMs: number[] = [];
  let feedBytes = 0;
  for (let i = 0; i < settings.feedRequests + 20; i++) {
    const t = performance.now();
    const feed = await client.feed();
    if (i >= 20) feedMs.push(performance.now() - t);
    feedBytes = JSON.stringify(feed).length;
  }
  report(["GET /feed p50 / p99", `${num(percentile(feedMs, 50), 2)} / ${num(percentile(feedMs, 99), 2)} ms (${num(feedBytes)} bytes)`, ""]);

  // 7. Fan-out to many /signal subscribers: raw sockets speaking HTTP/1.1, since fetch caps
  // the connections it keeps per host (BUN_CONFIG_MAX_HTTP_REQUESTS, 256 by default).
  log(`${num(settings.subscribers)} /signal subscribers`);
  const received: number[] = [];
  const sockets: Array<{ end(): void }> = [];
  let sentAt = 0;
  const subscribe = () =>
    new Promise<void>((resolveReady, reject) => {
      let text = "";
      let ready = false;
      let got = false;
      Bun.connect({
        hostname: "127.0.0.1",
        port,
        socket: {
          open(socket) {
            sockets.push(socket);
            socket.write(`GET /signal HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: text/event-stream\r\n\r\n`);
          },
          data(_socket, chunk) {
            text += chunk.toString();
            if (!ready && text.includes(": connected")) {
              ready = true;
              resolveReady();
            }
            if (ready && !got && text.includes("event: signal")) {
              got = true;
              received.push(performance.now() - sentAt);
            }
          },
          error(_socket, err) {
            if (!ready) reject(err);
          },
        },
      }).catch(reject);
    });
  const connectDeadline = AbortSignal.timeout(60_000);
  for (let i = 0; i < settings.subscribers; i += 100) {
    if (connectDeadline.aborted) throw new Error("subscribers did not all connect within 60 s");
    await Promise.all(Array.from({ length: Math.min(100, settings.subscribers - i) }, subscribe));
  }
  sentAt = performance.now();
  await client.marker({ type: "signal", content: `bench fan-out ${Date.now()}`, attrs: { severity: "critical", source: "bench" } });
  const deadline = performance.now() + 30_000;
  while (received.length < settings.subscribers && performance.now() < deadline) await Bun.sleep(5);
  for (const s of sockets) s.end();
  report([
    `/signal fan-out to ${num(settings.subscribers)}`,
    `p50 ${num(percentile(received, 50), 1)} / p99 ${num(percentile(received, 99), 1)} / max ${num(Math.max(...received), 1)} ms (${num(received.length)} received)`,
    "",
  ]);
  report(["RSS at the end", `${num(rssMb(started.pid))} MB`, ""]);
} finally {
  await started.stop();
  if (!args.keep) rmSync(dir, { recursive: true, force: true });
}

console.log(
  `\ntick benchmark: ${num(settings.notes)} raw notes (${num(written.bytes / 1e6, 1)} MB, ${num(inlineWritten)} with an inline marker), ` +
    `${num(settings.markers)} posted markers, ${num(settings.subscribers)} subscribers; bun ${Bun.version}\n`,
);
console.log(table(rows));
