// router-cli sync [--wait | --check]: replay buffered markers (the hooks package's outbox and
// backlog folders, one JSON file per marker: {type, content, attrs, session_id,
// idempotency_key}) into POST /marker, preserving their original time (attrs.ts) and sending
// their idempotency key; accepted files leave the outbox (to ~/.router/sent/), files the
// router refuses go to ~/.router/rejected/ with the reason; then a tick is enqueued.
// Idempotent: a second run posts nothing new. Exit 0 clean, 1 hard failure, 2 degraded.
import { access, mkdir, readFile, readdir, rename, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { defineCommand } from "citty";
import { consola } from "consola";
import { ApiError, ConnectionError } from "../../src/router/client";
import { client, connectionArgs, home, readEnvFile, reportFailure } from "./_context";
import { enqueueTick, tickId, waitForTick } from "./_tick";

interface BufferedMarker {
  type?: unknown;
  content?: unknown;
  attrs?: Record<string, unknown>;
  session_id?: unknown;
  idempotency_key?: unknown;
}

export default defineCommand({
  meta: { name: "sync", description: "Replay buffered markers into the router, then enqueue a tick (exit 0 clean, 1 failure, 2 degraded)" },
  args: {
    ...connectionArgs,
    wait: { type: "boolean", description: "block until the tick is done" },
    check: { type: "boolean", description: "narrate progress (implies --wait)" },
    outbox: { type: "string", description: "marker outbox (default BRAIN_OUTBOX or ~/.router/outbox)" },
    backlog: { type: "string", description: "marker backlog (default BRAIN_BACKLOG or ~/.router/backlog)" },
  },
  async run({ args }) {
    const file = readEnvFile();
    const dirs = [
      args.outbox || process.env.BRAIN_OUTBOX || file.BRAIN_OUTBOX || join(home(), ".router", "outbox"),
      args.backlog || process.env.BRAIN_BACKLOG || file.BRAIN_BACKLOG || join(home(), ".router", "backlog"),
    ];
    const narrate = (m: string) => args.check && consola.info(m);
    const sent = join(home(), ".router", "sent");
    const rejected = join(home(), ".router", "rejected");
    const c = client(args);
    let posted = 0;
    let duplicates = 0;
    let refused = 0;

    for (const dir of dirs) {
      const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(".json")).sort();
      narrate(`${dir}: ${names.length} marker file(s)`);
      for (const name of names) {
        const path = join(dir, name);
        let marker: BufferedMarker;
        try {
          marker = JSON.parse(await readFile(path, "utf8"));
        } catch (err) {
          await moveAside(path, rejected, `not JSON: ${(err as Error).message}`);
          refused++;
          continue;
        }
        // The original time travels with the marker: attrs.ts, else when the file was written.
        const ts = marker.attrs?.ts ?? new Date((await stat(path)).mtimeMs).toISOString();
        const attrs = { ...marker.attrs, ts, ...(marker.session_id && !marker.attrs?.session_id ? { session_id: marker.session_id } : {}) };
        const key = typeof marker.idempotency_key === "string" && marker.idempotency_key ? marker.idempotency_key : undefined;
        try {
          const res = await c.raw("POST", "/marker", { type: marker.type, content: marker.content, attrs }, key ? { "x-idempotency-key": key } : {});
          if (res.status === 200 || res.status === 201) {
            if (res.status === 200) duplicates++;
            else posted++;
            await moveAside(path, sent);
            narrate(`  ${name}: ${res.status === 201 ? "recorded" : "already recorded"}`);
          } else if (res.status === 401 || res.status === 503 || res.status >= 500) {
            throw await apiError(res);
          } else {
            await moveAside(path, rejected, `${res.status}: ${(await res.text()).slice(0, 300)}`);
            refused++;
            narrate(`  ${name}: refused (${res.status})`);
          }
        } catch (err) {
          if (err instanceof ConnectionError || err instanceof ApiError) {
            consola.error(`${posted} marker(s) posted before the failure; the rest stay buffered`);
            process.exit(reportFailure(err));
          }
          throw err;
        }
      }
    }
    (args.check ? consola.info : consola.success)(`markers: ${posted} posted, ${duplicates} already there, ${refused} refused`);

    try {
      const queued = await enqueueTick(c, {});
      narrate(`tick ${tickId(queued)} ${queued.status}`);
      if (args.wait || args.check) {
        const done = await waitForTick(c, tickId(queued), { onStatus: (t) => narrate(`tick ${tickId(queued)}: ${t.status}`) });
        if (done.status === "failed") {
          consola.error(`tick ${tickId(queued)} failed:\n${done.error_tail ?? ""}`);
          process.exit(1);
        }
        consola.success(`tick ${tickId(queued)} succeeded${done.counts ? `: ${JSON.stringify(done.counts)}` : ""}`);
      } else {
        consola.success(`tick ${tickId(queued)} ${queued.status}`);
      }
    } catch (err) {
      process.exit(reportFailure(err));
    }
    process.exit(refused > 0 ? 2 : 0);
  },
});

/** The router's error body, when it sent one, as an ApiError (for one clear line). */
async function apiError(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => "");
  let e: { code?: string; message?: string } | undefined;
  try {
    e = (JSON.parse(text) as { error?: typeof e }).error;
  } catch {
    e = undefined;
  }
  return new ApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? text.slice(0, 200));
}

/** Moves a marker file into `dir`, never over an earlier one of the same name (outbox and backlog may share names). */
async function moveAside(path: string, dir: string, reason?: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const name = basename(path);
  let target = join(dir, name);
  for (let n = 1; await access(target).then(() => true, () => false); n++) target = join(dir, name.replace(/(\.json)?$/, `.${n}$1`));
  await rename(path, target);
  if (reason) await writeFile(`${target}.reason`, `${reason}\n`);
}
