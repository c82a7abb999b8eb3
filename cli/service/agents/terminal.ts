// The terminal under the agents TUI: raw mode, a line editor (printable keys, Backspace, Enter;
// Ctrl-C or Ctrl-D on an empty line quits; escape sequences such as arrow keys are ignored),
// and a ticking "working…" line while a call runs. No library: keys in, ANSI out.
export const ANSI = {
  clear: "\x1b[2J\x1b[H",
  clearLine: "\r\x1b[2K",
  bold: (s: string) => `\x1b[1m${s}\x1b[0m`,
  dim: (s: string) => `\x1b[2m${s}\x1b[0m`,
  green: (s: string) => `\x1b[32m${s}\x1b[0m`,
  yellow: (s: string) => `\x1b[33m${s}\x1b[0m`,
  red: (s: string) => `\x1b[31m${s}\x1b[0m`,
  cyan: (s: string) => `\x1b[36m${s}\x1b[0m`,
};

type Key = { kind: "char"; ch: string } | { kind: "enter" } | { kind: "backspace" } | { kind: "quit" } | { kind: "eof" };

export class Terminal {
  private keys: Key[] = [];
  private wake?: () => void;
  private escape: "" | "esc" | "csi" = "";
  private readonly onData = (chunk: Buffer | string) => this.feed(typeof chunk === "string" ? chunk : chunk.toString("utf8"));

  constructor(
    private readonly input: NodeJS.ReadStream = process.stdin,
    private readonly output: NodeJS.WriteStream = process.stdout,
  ) {}

  start(): void {
    this.input.setRawMode?.(true);
    this.input.on("data", this.onData);
    this.input.resume();
  }

  stop(): void {
    this.input.off("data", this.onData);
    this.input.setRawMode?.(false);
    this.input.pause();
  }

  write(text: string): void {
    this.output.write(text);
  }

  line(text = ""): void {
    this.output.write(`${text}\r\n`);
  }

  clear(): void {
    this.output.write(ANSI.clear);
  }

  private feed(text: string): void {
    for (const ch of text) {
      const code = ch.codePointAt(0)!;
      // ESC [ params final-byte: skipped whole, so arrows and the like type nothing.
      if (this.escape === "esc") {
        this.escape = ch === "[" || ch === "O" ? "csi" : "";
        continue;
      }
      if (this.escape === "csi") {
        if (code >= 0x40 && code <= 0x7e) this.escape = "";
        continue;
      }
      if (code === 0x1b) this.escape = "esc";
      else if (code === 0x03) this.keys.push({ kind: "quit" });
      else if (code === 0x04) this.keys.push({ kind: "eof" });
      else if (code === 0x0d || code === 0x0a) this.keys.push({ kind: "enter" });
      else if (code === 0x7f || code === 0x08) this.keys.push({ kind: "backspace" });
      else if (code >= 0x20) this.keys.push({ kind: "char", ch });
    }
    this.wake?.();
  }

  private async nextKey(): Promise<Key> {
    while (this.keys.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    return this.keys.shift()!;
  }

  /** A line typed after `prompt`; null when the user quits (Ctrl-C, or Ctrl-D on an empty line). */
  async readLine(prompt: string): Promise<string | null> {
    this.write(prompt);
    let text = "";
    for (;;) {
      const key = await this.nextKey();
      if (key.kind === "quit" || (key.kind === "eof" && text === "")) {
        this.line();
        return null;
      }
      if (key.kind === "enter") {
        this.line();
        return text;
      }
      if (key.kind === "backspace") {
        if (text.length > 0) {
          text = [...text].slice(0, -1).join("");
          this.write("\b \b");
        }
      } else if (key.kind === "char") {
        text += key.ch;
        this.write(key.ch);
      }
    }
  }

  /** Runs `work` with a "label… 3s" line ticking, then clears it. */
  async busy<T>(label: string, work: Promise<T>): Promise<T> {
    const t0 = Date.now();
    const draw = () => this.write(`${ANSI.clearLine}${ANSI.dim(`${label}… ${Math.floor((Date.now() - t0) / 1000)}s`)}`);
    draw();
    const timer = setInterval(draw, 250);
    try {
      return await work;
    } finally {
      clearInterval(timer);
      this.write(ANSI.clearLine);
    }
  }
}
