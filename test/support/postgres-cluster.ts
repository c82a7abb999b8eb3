// A Postgres cluster of the test's own on a spare loopback port (pg_createcluster, trust auth),
// for tests that stop and start the database (never the shared one): stop() and start() are
// `pg_ctlcluster`, drop() removes the cluster and its data.
import { freePort } from "./process";

export interface OwnPostgres {
  port: number;
  url: string;
  start(): void;
  /** A fast shutdown: open connections are cut. */
  stop(): void;
  drop(): void;
}

const VERSION = "15";

export const hasPgCluster = Bun.which("pg_createcluster") !== null && Bun.which("pg_ctlcluster") !== null && process.getuid?.() === 0;

function run(argv: string[]): void {
  const out = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  if (out.exitCode !== 0) throw new Error(`${argv.join(" ")} failed (${out.exitCode}): ${out.stderr.toString()}${out.stdout.toString()}`);
}

export function ownPostgres(): OwnPostgres {
  const port = freePort();
  const name = `brain-test-${process.pid}-${port}`;
  run(["pg_createcluster", VERSION, name, "-p", String(port), "--", "--auth=trust"]);
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => run(["pg_ctlcluster", VERSION, name, "start"]),
    stop: () => run(["pg_ctlcluster", "-m", "fast", VERSION, name, "stop"]),
    drop: () => run(["pg_dropcluster", "--stop", VERSION, name]),
  };
}
