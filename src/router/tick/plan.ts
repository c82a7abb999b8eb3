// A tick's vault changes, staged: every step computes what it wants written or removed, and
// only once every step has succeeded are the changes applied (each file atomically). A step
// that fails leaves the vault as it was; a dry run lists the plan and applies nothing.
import { mkdir, readFile, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { safeVaultPath } from "../vault/safe-path";

type Change =
  | { kind: "write"; path: string; content: string }
  | { kind: "delete"; path: string }
  /** A read-modify-write that must run under another writer's lock (signal sweeps). */
  | { kind: "update"; path: string; apply: () => Promise<boolean> };

export interface PlanSummary {
  writes: string[];
  deletes: string[];
}

export class VaultPlan {
  private readonly changes = new Map<string, Change>();

  constructor(private readonly vault: string) {}

  /** Stages `content` for `path` unless the file already holds exactly that. */
  async write(path: string, content: string): Promise<void> {
    const current = await readFile(await safeVaultPath(this.vault, path), "utf8").catch(() => null);
    if (current === content) this.changes.delete(path);
    else this.changes.set(path, { kind: "write", path, content });
  }

  /** Stages the removal of `path` when it exists. */
  async delete(path: string): Promise<void> {
    const exists = await Bun.file(await safeVaultPath(this.vault, path)).exists();
    if (exists) this.changes.set(path, { kind: "delete", path });
  }

  update(path: string, apply: () => Promise<boolean>): void {
    this.changes.set(path, { kind: "update", path, apply });
  }

  summary(): PlanSummary {
    const all = [...this.changes.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
    return {
      writes: all.filter((c) => c.kind !== "delete").map((c) => c.path),
      deletes: all.filter((c) => c.kind === "delete").map((c) => c.path),
    };
  }

  /** Applies every staged change; returns the vault paths that changed. */
  async apply(): Promise<string[]> {
    const changed: string[] = [];
    for (const c of [...this.changes.values()].sort((a, b) => (a.path < b.path ? -1 : 1))) {
      if (c.kind === "update") {
        // Resolves its own path under the lock of the file's other writers.
        if (await c.apply()) changed.push(c.path);
        continue;
      }
      const abs = await safeVaultPath(this.vault, c.path);
      if (c.kind === "write") {
        await mkdir(dirname(abs), { recursive: true });
        await writeFileAtomic(abs, c.content);
        changed.push(c.path);
      } else {
        await unlink(abs).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "ENOENT") throw err;
        });
        changed.push(c.path);
      }
    }
    this.changes.clear();
    return changed;
  }
}
