// Which failures are "the index database is away" (503 index_unavailable), from both Postgres
// clients the store uses: the `postgres` package (writes, filtered searches) and Bun.SQL (the
// searches' own pool). The errors are real: a port nothing listens on, and a real server.
import { expect, it } from "bun:test";
import postgres from "postgres";
import { describeWithPostgres, PG_URL } from "../../../test/support/index-postgres.ts";
import { freePort } from "../../../test/support/process.ts";
import { isConnectionLost } from "./unavailable.ts";

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error("expected the statement to fail");
}

it("a refused connection is the database being away, from either client", async () => {
  const url = `postgres://postgres@127.0.0.1:${freePort()}/none`;
  const bun = new Bun.SQL(url, { max: 1, connectionTimeout: 5 });
  const pkg = postgres(url, { max: 1, connect_timeout: 5 });
  try {
    expect(isConnectionLost(await failure(() => bun`SELECT 1`))).toBe(true);
    expect(isConnectionLost(await failure(() => pkg`SELECT 1`))).toBe(true);
  } finally {
    await Promise.all([bun.close(), pkg.end()]);
  }
});

describeWithPostgres("a live server's failures", () => {
  it("a session the server ends is the database being away; a failing statement is not", async () => {
    const bun = new Bun.SQL(PG_URL, { max: 1 });
    const pkg = postgres(PG_URL, { max: 1, onnotice: () => {} });
    try {
      expect(isConnectionLost(await failure(() => bun`SELECT 1 / 0`))).toBe(false);
      expect(isConnectionLost(await failure(() => pkg`SELECT 1 / 0`))).toBe(false);
      // 57P01: the session terminated, as a server shutting down terminates it (Bun.SQL gives
      // the SQLSTATE in errno; the package's code, 57P01 itself, was always mapped).
      expect(isConnectionLost(await failure(() => bun`SELECT pg_terminate_backend(pg_backend_pid())`))).toBe(true);
      // The pool opens a new session for the next statement.
      expect([...(await bun`SELECT 2 AS two`)]).toEqual([{ two: 2 }]);
    } finally {
      await Promise.all([bun.close(), pkg.end()]);
    }
  });
});
