// wrk with a Lua script that POSTs a rotating set of JSON bodies (e.g. /search queries), so
// the load generator stays a separate C process while every request asks something else.
// Parsed with load.ts's parseWrk; wrk itself comes from load.ts's loadTool() (installed from
// Debian when missing and we are root).
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../../test/support/main-process.ts";
import { type LoadResult, parseWrk } from "./load.ts";

export interface WrkPostOptions {
  /** Base URL, e.g. http://127.0.0.1:8103 */
  baseUrl: string;
  path: string;
  bodies: readonly string[];
  headers?: Record<string, string>;
  seconds: number;
  connections: number;
  threads?: number;
}

/** A Lua long-bracket literal that cannot be closed by its content. */
function luaString(s: string): string {
  let eq = "=";
  while (s.includes(`]${eq}]`)) eq += "=";
  return `[${eq}[${s}]${eq}]`;
}

export function wrkPostScript(path: string, bodies: readonly string[], headers: Record<string, string>): string {
  const lines = [
    `wrk.method = "POST"`,
    `wrk.headers["Content-Type"] = "application/json"`,
    ...Object.entries(headers).map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`),
    `local bodies = {`,
    ...bodies.map((b) => `  ${luaString(b)},`),
    `}`,
    // Each thread has its own Lua state; start threads at different offsets.
    `local i = math.random(0, #bodies - 1)`,
    `request = function()`,
    `  i = (i % #bodies) + 1`,
    `  return wrk.format(nil, ${luaString(path)}, nil, bodies[i])`,
    `end`,
  ];
  return `${lines.join("\n")}\n`;
}

export async function runWrkPost(o: WrkPostOptions): Promise<LoadResult> {
  const dir = tempDir("brain-bench-wrk");
  const script = join(dir, "post.lua");
  writeFileSync(script, wrkPostScript(o.path, o.bodies, o.headers ?? {}));
  const cmd = ["wrk", `-t${o.threads ?? 1}`, `-c${o.connections}`, `-d${o.seconds}s`, "--latency", "-s", script, o.baseUrl];
  try {
    const proc = Bun.spawn({ cmd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => proc.kill("SIGKILL"), (o.seconds + 60) * 1000);
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    clearTimeout(timer);
    if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${err}${out}`);
    return parseWrk(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
