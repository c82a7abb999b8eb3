// The harvest's scan state (<DATA_DIR>/tick/harvest-state.json): the mtime and size of every
// note the last tick scanned, one `"path":"stamp"` member per line in comparePaths order (a
// JSON object all the same). It is read and written as the vault walk streams past, so a vault
// of any size costs one line in memory, not a map of every note. A state that cannot be read
// (missing, an older single-line file) is empty: the notes are read again and the marker
// ledger recognises what was recorded already.
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { comparePaths } from "../vault/walk";

/** The previous state, asked in ascending path order. */
export class SortedStateReader {
  private readonly lines: AsyncIterator<string> | undefined;
  private readonly stream: ReturnType<typeof createReadStream> | undefined;
  private head: [string, string] | undefined;
  private done = false;

  constructor(path: string) {
    try {
      this.stream = createReadStream(path, { encoding: "utf8" });
      this.stream.on("error", () => {});
      this.lines = createInterface({ input: this.stream, crlfDelay: Number.POSITIVE_INFINITY })[Symbol.asyncIterator]();
    } catch {
      this.done = true;
    }
  }

  /** The stamp recorded for `path`; paths must be asked in ascending order. */
  async stampOf(path: string): Promise<string | undefined> {
    while (!this.done && (this.head === undefined || comparePaths(this.head[0], path) < 0)) this.head = await this.nextEntry();
    return this.head && this.head[0] === path ? this.head[1] : undefined;
  }

  private async nextEntry(): Promise<[string, string] | undefined> {
    while (this.lines) {
      let line: IteratorResult<string>;
      try {
        line = await this.lines.next();
      } catch {
        break; // unreadable (missing, a folder): what was read stands, the rest is unknown
      }
      if (line.done) break;
      const text = line.value.trim();
      if (text === "{" || text === "}" || text === "") continue;
      try {
        const member = Object.entries(JSON.parse(`{${text.replace(/^,/, "")}}`) as Record<string, unknown>);
        const [entry] = member;
        if (member.length === 1 && typeof entry?.[1] === "string") return [entry[0], entry[1]];
      } catch {}
      break; // not a line of this format (an older state file): the rest is unknown
    }
    this.done = true;
    return undefined;
  }

  close(): void {
    this.stream?.destroy();
  }
}

/** The next state, written as the walk goes (ascending paths), put in place whole by commit(). */
export class HarvestStateWriter {
  private first = true;
  private closed = false;

  private constructor(
    private readonly path: string,
    private readonly temp: string,
    private readonly sink: ReturnType<ReturnType<typeof Bun.file>["writer"]>,
  ) {
    sink.write("{\n");
  }

  static async open(path: string): Promise<HarvestStateWriter> {
    await mkdir(dirname(path), { recursive: true });
    const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
    return new HarvestStateWriter(path, temp, Bun.file(temp).writer({ highWaterMark: 64 * 1024 }));
  }

  add(path: string, stamp: string): void {
    this.sink.write(`${this.first ? "" : ","}${JSON.stringify(path)}:${JSON.stringify(stamp)}\n`);
    this.first = false;
  }

  /** Writes the rest and renames the file over the old state. */
  async commit(): Promise<void> {
    this.sink.write("}\n");
    await this.sink.end();
    this.closed = true;
    try {
      await rename(this.temp, this.path);
    } catch (err) {
      await unlink(this.temp).catch(() => {});
      throw err;
    }
  }

  /** Drops the temp file unless commit() put it in place. */
  async discard(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.resolve(this.sink.end()).catch(() => {});
    await unlink(this.temp).catch(() => {});
  }
}
