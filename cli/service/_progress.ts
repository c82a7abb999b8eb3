// Progress while `run --wait` waits: on a terminal a spinner line with the status and the
// elapsed time, redrawn in place; otherwise plain lines, one per status change and one every
// 30 s while nothing changes. Always on stderr, so stdout holds only the result.
import { elapsed } from "./_job-view";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const PLAIN_EVERY_MS = 30_000;

export interface Progress {
  update(status: string): void;
  /** Clears the spinner line (a terminal) and stops redrawing. */
  stop(): void;
}

export function startProgress(label: string, out: NodeJS.WriteStream = process.stderr): Progress {
  const t0 = Date.now();
  let status = "";
  if (out.isTTY) {
    let frame = 0;
    const draw = () => out.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${label}: ${status} · ${elapsed(Date.now() - t0)}`);
    const timer = setInterval(draw, 100);
    return {
      update(s) {
        status = s;
        draw();
      },
      stop() {
        clearInterval(timer);
        out.write("\r\x1b[2K");
      },
    };
  }
  let lastLine = 0;
  const line = () => {
    lastLine = Date.now();
    out.write(`${label}: ${status} (${elapsed(Date.now() - t0)})\n`);
  };
  const timer = setInterval(() => Date.now() - lastLine >= PLAIN_EVERY_MS && line(), 1000);
  return {
    update(s) {
      if (s === status) return;
      status = s;
      line();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
