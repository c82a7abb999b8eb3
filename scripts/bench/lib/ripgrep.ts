// The no-index baseline: ripgrep (Debian's `ripgrep` package; installed with apt-get when
// missing and we are root, as load.ts does for wrk) over raw/ for each query of the set.
// rg lists matching files, unranked: its words are searched case-insensitively as fixed
// strings, any of them (rg has no AND across lines), phrases as one string, tag:x as "x".
import { parseQuery } from "../../../src/router/index/index.ts";

export async function ensureRipgrep(): Promise<string | undefined> {
  const found = Bun.which("rg");
  if (found) return found;
  if (process.getuid?.() !== 0 || !Bun.which("apt-get")) {
    console.error("rg is not on PATH (install the Debian package 'ripgrep'); the rg baseline is skipped");
    return undefined;
  }
  console.error("rg is not on PATH; installing ripgrep with apt-get (running as root)…");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const run = async (cmd: string[]) => (await Bun.spawn({ cmd, env, stdin: "ignore", stdout: "ignore", stderr: "ignore" }).exited) === 0;
  if (!(await run(["apt-get", "install", "-y", "-qq", "ripgrep"]))) {
    await run(["apt-get", "update", "-qq"]);
    await run(["apt-get", "install", "-y", "-qq", "ripgrep"]);
  }
  return Bun.which("rg") ?? undefined;
}

/** The fixed strings rg looks for to answer `query`. */
export function rgPatterns(query: string): string[] {
  const q = parseQuery(query);
  return [...q.terms, ...q.phrases.map((p) => p.join(" ")), ...q.tags];
}

export interface RgTiming {
  query: string;
  ms: number;
  files: number;
}

/** One rg run per query (process start included: that is what a user waits for). */
export async function timeRipgrep(rg: string, dir: string, queries: readonly string[]): Promise<RgTiming[]> {
  const out: RgTiming[] = [];
  for (const query of queries) {
    const patterns = rgPatterns(query).flatMap((p) => ["-e", p]);
    const t0 = performance.now();
    const proc = Bun.spawn({ cmd: [rg, "--files-with-matches", "--ignore-case", "--fixed-strings", ...patterns, dir], stdout: "pipe", stderr: "ignore" });
    const text = await new Response(proc.stdout).text();
    await proc.exited;
    out.push({ query, ms: performance.now() - t0, files: text ? text.trimEnd().split("\n").length : 0 });
  }
  return out;
}
