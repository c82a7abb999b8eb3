// The Postgres store's vector paths need pgvector, which the CI Postgres lacks: run the
// suite against PGlite (Postgres in WASM) with its pgvector build, served on a loopback
// socket so the real `postgres` client talks to it over the wire protocol.
import { afterAll } from "bun:test";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { postgresLab } from "../../../test/support/index-postgres.ts";
import { describeIndexStore } from "../../../test/support/index-search-suite.ts";

const db = await PGlite.create({ extensions: { vector } });
// port 0: the OS picks a free loopback port.
const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 16 });
await server.start();
const url = `postgres://postgres@${server.getServerConn()}/postgres`;

afterAll(async () => {
  await server.stop();
  await db.close();
});

// PGlite is one session: every client connection shares it, so each store gets one
// connection (max 1) and no two transactions ever interleave.
describeIndexStore(
  "Postgres index with pgvector (PGlite)",
  async () => postgresLab(url, { max: 1 }, async (schema) => void (await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))),
  { vectors: true },
);
