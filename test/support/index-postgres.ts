// Shared by the Postgres index tests: a lab per test in a fresh random schema (dropped
// afterwards), and the rule for a missing Postgres (fail under CI, skip loudly elsewhere).
import { describe, test } from "bun:test";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { openPostgresIndex, type PostgresIndexOptions } from "../../src/router/index/postgres.ts";
import type { StoreLab } from "./index-search-suite.ts";

export const PG_URL = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export const randomSchema = () => `index_test_${randomBytes(6).toString("hex")}`;

/** A lab over `url` in a schema of its own; `drop` removes the schema (default: over a fresh connection). */
export function postgresLab(url = PG_URL, extra: Partial<PostgresIndexOptions> = {}, drop?: (schema: string) => Promise<void>): StoreLab & { schema: string } {
  const schema = randomSchema();
  return {
    schema,
    open: (o = {}) => openPostgresIndex({ url, schema, ...extra, ...o }),
    async cleanup() {
      if (drop) return drop(schema);
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await sql.end();
      }
    },
  };
}

const missing = await (async () => {
  const sql = postgres(PG_URL, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`SELECT 1`;
    return null;
  } catch (err) {
    return new Error(`PostgreSQL does not answer at ${PG_URL.replace(/\/\/[^@/]*@/, "//****@")}: ${(err as Error).message}`);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
})();
if (missing && process.env.CI !== "true") console.warn(`\n⚠ Skipping the Postgres index tests: ${missing.message}\n`);

/** describe() when Postgres answers; otherwise a failing test under CI=true, a visible skip elsewhere. */
export function describeWithPostgres(name: string, body: () => void): void {
  if (missing === null) {
    describe(name, body);
    return;
  }
  // CI promises a real Postgres; its absence is a broken pipeline, not a reason to skip.
  if (process.env.CI === "true") {
    test(`${name}: PostgreSQL answers at TEST_DATABASE_URL (required when CI=true)`, () => {
      throw missing;
    });
    return;
  }
  describe.skip(name, body);
}
