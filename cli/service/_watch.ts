// `run --wait` and `job --follow`: a job's events as they happen (GET /jobs/{id}/events). Tool
// calls one line each with a short preview of their arguments, text as it comes, and a status
// line (elapsed, turns, tokens, cost): redrawn in place on a terminal, printed as plain lines
// when piped. Colour only on a terminal. Everything goes to stderr, so stdout keeps the result.
import type { Job, JobStreamEvent, ServiceClient } from "../../src/orchestrator/client";
import { ApiError } from "../../src/orchestrator/client";
import { elapsed } from "./_job-view";

const finished = (s: unknown) => s === "succeeded" || s === "failed" || s === "cancelled";
/** Reconnects after a dropped stream, resuming after the last event seen. */
const MAX_RECONNECTS = 20;

interface Out {
  isTTY?: boolean;
  columns?: number;
  write(s: string): unknown;
}

const paint = (tty: boolean) => {
  const c = (code: string) => (s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
  return { dim: c("2"), bold: c("1"), cyan: c("36"), green: c("32"), red: c("31"), yellow: c("33") };
};

const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, Math.max(0, n - 1))}…` : s);
const PREVIEW_KEYS = ["command", "file_path", "path", "pattern", "url", "query", "prompt", "description"];

/** A tool call's arguments in a few words: the telling member when there is one, else compact JSON. */
export function argsPreview(input: unknown): string {
  if (typeof input === "string") return oneLine(input);
  if (input && typeof input === "object") {
    const rec = input as Record<string, unknown>;
    for (const k of PREVIEW_KEYS) if (typeof rec[k] === "string" && rec[k] !== "") return oneLine(rec[k] as string);
    return oneLine(JSON.stringify(input));
  }
  return input === undefined ? "" : String(input);
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const number = (n: unknown) => (typeof n === "number" ? n.toLocaleString("en-US") : "0");

export interface Watcher {
  /** One event, rendered. */
  show(e: JobStreamEvent): void;
  stop(): void;
}

export function createWatcher(label: string, out: Out = process.stderr, startedAt = Date.now()): Watcher {
  const tty = out.isTTY === true;
  const p = paint(tty);
  const width = () => Math.max(40, (out.columns || 100) - 1);
  let status = "queued";
  let turns = 0;
  let tokens = 0;
  let cost: number | null = null;
  let statusShown = false;
  let frame = 0;
  const line = () => {
    const parts = [`${label}: ${status}`, elapsed(Date.now() - startedAt), `${turns} turn${turns === 1 ? "" : "s"}`, `${number(tokens)} tokens`];
    if (cost !== null) parts.push(`$${cost.toFixed(4)}`);
    return parts.join(" · ");
  };
  const clear = () => {
    if (tty && statusShown) out.write("\r\x1b[2K");
    statusShown = false;
  };
  const draw = () => {
    if (!tty) return;
    out.write(`\r\x1b[2K${p.cyan(FRAMES[frame++ % FRAMES.length]!)} ${p.dim(clip(line(), width() - 2))}`);
    statusShown = true;
  };
  const print = (text: string) => {
    clear();
    out.write(`${text}\n`);
    draw();
  };
  const timer = tty ? setInterval(draw, 200) : undefined;
  timer?.unref?.();

  return {
    show(e) {
      const d = e.data;
      switch (e.type) {
        case "status":
          status = String(d.status);
          if (tty)
            print(`${finished(d.status) ? (d.status === "succeeded" ? p.green("●") : p.red("●")) : p.cyan("●")} ${status}${d.error ? `: ${d.error}` : ""}`);
          else print(`${line()}${d.error ? `: ${d.error}` : ""}`);
          break;
        case "text":
          print(d.final ? p.bold(String(d.text)) : String(d.text));
          break;
        case "thinking":
          print(p.dim(`thinking: ${clip(oneLine(String(d.text)), width() - 10)}`));
          break;
        case "tool_use": {
          const name = String(d.name);
          print(`${p.yellow("→")} ${p.bold(name)} ${p.dim(clip(argsPreview(d.input), Math.max(10, width() - name.length - 3)))}`);
          break;
        }
        case "tool_result": {
          const body = oneLine(String(d.content ?? ""));
          const mark = d.is_error ? p.red("✗") : p.green("✓");
          print(`  ${mark} ${p.dim(clip(body || "(no output)", width() - 4))}`);
          break;
        }
        case "usage": {
          const u = (d.usage ?? {}) as Record<string, number>;
          turns = Number(d.num_turns ?? turns);
          tokens = (u.input_tokens ?? 0) + (u.output_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
          cost = typeof d.total_cost_usd === "number" ? d.total_cost_usd : cost;
          if (tty) draw();
          else print(line());
          break;
        }
        case "error":
          print(p.red(`error (${d.code}): ${d.message}`));
          break;
        case "cut":
          print(p.yellow(`… ${d.message}`));
          break;
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      clear();
    },
  };
}

/**
 * Follows a job to its end through its events (resuming after a dropped connection), then
 * returns the finished record. Falls back to polling when the server keeps no events.
 */
export async function watchJob(c: ServiceClient, job: Job, out: Out = process.stderr): Promise<Job> {
  const w = createWatcher(`job ${job.id.slice(0, 8)}`, out, job.started_at ? Date.parse(job.started_at) : Date.now());
  let last = 0;
  let ended = false;
  try {
    for (let attempt = 0; attempt <= MAX_RECONNECTS && !ended; attempt++) {
      let got = 0;
      try {
        for await (const e of c.jobEvents(job.id, { lastEventId: last })) {
          got++;
          last = e.id;
          w.show(e);
          if (e.type === "status" && finished(e.data.status)) ended = true;
        }
      } catch (err) {
        if (err instanceof ApiError && err.status === 503) return await poll(c, job);
        if (err instanceof ApiError) throw err;
        await Bun.sleep(Math.min(200 * 2 ** attempt, 3_000));
        continue;
      }
      // The stream ended without the final status: a dropped connection (resume), or a log that lacks it.
      if (!ended && got === 0 && finished((await c.getJob(job.id)).status)) break;
    }
  } finally {
    w.stop();
  }
  return c.getJob(job.id);
}

async function poll(c: ServiceClient, job: Job): Promise<Job> {
  let j = job;
  while (!finished(j.status)) {
    await Bun.sleep(500);
    j = await c.getJob(job.id);
  }
  return j;
}
