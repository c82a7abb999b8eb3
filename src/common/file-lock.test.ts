import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acquireFileLock, FileLockTimeoutError, withFileLock } from "./file-lock.ts";

const lockModule = JSON.stringify(join(import.meta.dir, "file-lock.ts"));

let root: string;
let target: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "file-lock-"));
  target = join(root, "resource");
});
afterEach(() => rm(root, { recursive: true, force: true }));

/** Starts `bun <script> ...args` from a temp file; the script sees the lock module's path. */
async function spawnScript(script: string, ...args: string[]) {
  const file = join(root, `script-${Math.random().toString(36).slice(2)}.ts`);
  await Bun.write(file, script);
  return Bun.spawn([process.execPath, file, ...args], { stdout: "pipe", stderr: "inherit" });
}

/** A process that takes the lock, says "locked" and holds it until killed. */
async function spawnHolder(staleMs: number) {
  const proc = await spawnScript(
    `import { acquireFileLock } from ${lockModule};
     await acquireFileLock(process.argv[2], { staleMs: ${staleMs} });
     console.log("locked");
     setInterval(() => {}, 1_000);`,
    target,
  );
  const reader = proc.stdout.getReader();
  let seen = "";
  while (!seen.includes("locked")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("holder exited before taking the lock");
    seen += new TextDecoder().decode(value);
  }
  return proc;
}

describe("withFileLock", () => {
  it("never lets two processes inside at once", async () => {
    const journal = join(root, "journal");
    // Each process says it is ready just before its first try; every process's first turn
    // waits inside the lock until all three are ready, so the others are trying while it holds
    // the lock: they really contend, whatever order they start in.
    const script = `
      import { appendFileSync, readFileSync } from "node:fs";
      import { withFileLock } from ${lockModule};
      const [target, journal, id] = process.argv.slice(2);
      appendFileSync(journal, "ready " + id + "\\n");
      for (let i = 0; i < 15; i++) {
        await withFileLock(target, async () => {
          appendFileSync(journal, "enter " + id + "\\n");
          while (i === 0 && (readFileSync(journal, "utf8").match(/^ready /gm) ?? []).length < 3) await Bun.sleep(5);
          await Bun.sleep(Math.random() * 5);
          appendFileSync(journal, "leave " + id + "\\n");
        });
        await Bun.sleep(Math.random() * 5);
      }`;
    const procs = await Promise.all(["a", "b", "c"].map((id) => spawnScript(script, target, journal, id)));
    expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0, 0]);

    const all = (await readFile(journal, "utf8")).trim().split("\n");
    // All three were trying before the first holder left.
    expect(all.findLastIndex((l) => l.startsWith("ready "))).toBeLessThan(all.findIndex((l) => l.startsWith("leave ")));
    const lines = all.filter((l) => !l.startsWith("ready "));
    expect(lines).toHaveLength(3 * 15 * 2);
    const turns = new Map<string, number>();
    for (let i = 0; i < lines.length; i += 2) {
      const id = lines[i]?.slice("enter ".length) ?? "";
      // Nobody else entered between a process's enter and its leave.
      expect([lines[i], lines[i + 1]]).toEqual([`enter ${id}`, `leave ${id}`]);
      turns.set(id, (turns.get(id) ?? 0) + 1);
    }
    expect(Object.fromEntries(turns)).toEqual({ a: 15, b: 15, c: 15 });
  });

  it("creates the lock's parent directory when it is missing", async () => {
    const deep = join(root, "not", "yet", "there");
    expect(await withFileLock(deep, () => "done")).toBe("done");
  });

  it("releases the lock when the function throws", async () => {
    await expect(withFileLock(target, () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await withFileLock(target, () => "free", { timeoutMs: 0 })).toBe("free");
    await expect(stat(`${target}.lock`)).rejects.toThrow("ENOENT");
  });
});

describe("acquireFileLock", () => {
  it("gives up after timeoutMs with an error naming the lock", async () => {
    const release = await acquireFileLock(target);
    try {
      const started = Date.now();
      const err = await acquireFileLock(target, { timeoutMs: 300 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FileLockTimeoutError);
      expect((err as Error).message).toContain(`${target}.lock`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    } finally {
      await release();
    }
  });

  it("waits for a held lock and takes it once released", async () => {
    const release = await acquireFileLock(target);
    let taken = false;
    const waiting = acquireFileLock(target, { timeoutMs: 5_000 }).then((r) => {
      taken = true;
      return r;
    });
    // A check that nothing happens: the waiter finds the lock taken and must not get it while held.
    await Bun.sleep(100);
    expect(taken).toBe(false);
    await release();
    const releaseSecond = await waiting;
    await releaseSecond();
  });

  it("does not take over a live holder's lock, however long it holds it", async () => {
    const holder = await spawnHolder(2_000);
    try {
      // Longer than staleMs: only the holder's mtime refreshes keep the lock fresh.
      await expect(acquireFileLock(target, { staleMs: 2_000, timeoutMs: 3_000 })).rejects.toThrow(FileLockTimeoutError);
    } finally {
      holder.kill("SIGKILL");
      await holder.exited;
    }
  });

  it("takes over the lock of a holder that died without releasing it", async () => {
    const holder = await spawnHolder(2_000);
    holder.kill("SIGKILL");
    await holder.exited;
    expect(await stat(`${target}.lock`)).toBeTruthy(); // the dead holder left it behind

    const started = Date.now();
    const release = await acquireFileLock(target, { staleMs: 2_000, timeoutMs: 10_000 });
    expect(Date.now() - started).toBeLessThan(5_000);
    await release();
  });
});
