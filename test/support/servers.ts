// Real PostgreSQL and Redis for the suites. A missing server is skipped with a visible
// warning on a developer's machine, and is a failure in CI (CI=true): no silent skip there.
import postgres from "postgres";

const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

async function answers(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}

/** True when the server answers; in CI a missing server throws instead of skipping. */
export async function requireServer(name: "PostgreSQL" | "Redis"): Promise<boolean> {
  const url = new URL(name === "PostgreSQL" ? TEST_POSTGRES_URL : TEST_REDIS_URL);
  const ok = await answers(Number(url.port || (name === "PostgreSQL" ? 5432 : 6379)));
  if (ok) return true;
  if (process.env.CI === "true") throw new Error(`${name} does not answer at ${url.host}, and CI=true: this suite must run against it`);
  console.warn(`⚠ ${name} does not answer at ${url.host}: skipping its suite (CI=true makes this a failure)`);
  return false;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database on the real server (or the one `adminUrl` reaches: the benches' BENCH_PG_URL), dropped afterwards. */
export async function createTestDatabase(prefix = "brain_test", adminUrl = TEST_POSTGRES_URL): Promise<TestDatabase> {
  const admin = postgres(adminUrl, { max: 1, connect_timeout: 5, onnotice: () => {} });
  const name = `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await sql.unsafe(`drop database if exists ${name} with (force)`);
      await sql.end();
    },
  };
}
