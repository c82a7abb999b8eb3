// A redis-server of the test's own on a spare loopback port, for tests that kill Redis (never the
// shared one): kill() is `kill -9`, start() brings it back on the same port and data directory,
// so with `appendonly` it reloads what it had and without it comes back empty.
import { join } from "node:path";
import type { Subprocess } from "bun";
import { tempDir } from "./main-process";
import { freePort } from "./process";
import { until } from "./until";

export interface OwnRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  /** SIGKILL: no save, no goodbye. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export const hasRedisServer = Bun.which("redis-server") !== null;

export function ownRedis(opts: { appendonly: boolean }): OwnRedis {
  const port = freePort();
  const dir = tempDir("own-redis");
  let proc: Subprocess | undefined;
  const own: OwnRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      proc = Bun.spawn(
        ["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", opts.appendonly ? "yes" : "no"],
        { stdout: "pipe", stderr: "pipe" },
      );
      const answers = async () => {
        if (proc?.exitCode != null) throw new Error(`redis-server on ${port} exited (${proc.exitCode}) (dir ${join(dir)})`);
        return Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
          (s) => {
            s.end();
            return true;
          },
          () => false,
        );
      };
      await until(answers, { ms: 5_000, what: `redis-server on ${port} to answer (dir ${join(dir)})` });
    },
    async kill() {
      proc?.kill("SIGKILL");
      await proc?.exited;
    },
    async stop() {
      proc?.kill("SIGTERM");
      await proc?.exited;
    },
  };
  return own;
}
