// router-cli migrate: apply the index's SQL migrations to DATABASE_URL (what `up` runs
// inside the stack). Idempotent; safe while the router runs (advisory lock).
import { defineCommand } from "citty";
import { consola } from "consola";
import postgres from "postgres";
import { migrate } from "../../src/router/index/migrate";
import { fail } from "../_errors";

export default defineCommand({
  meta: { name: "migrate", description: "Apply the index migrations to DATABASE_URL" },
  args: { "database-url": { type: "string", description: "default: env DATABASE_URL" } },
  async run({ args }) {
    const url = args["database-url"] || process.env.DATABASE_URL;
    if (!url) {
      consola.info("DATABASE_URL is not set: the router uses its embedded SQLite index, which migrates itself");
      return;
    }
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      // The same rule as the router: vectors exist when an embeddings service is configured.
      const dim = process.env.EMBEDDINGS_URL ? Number(process.env.EMBEDDINGS_DIM || 1536) : undefined;
      const result = await migrate(sql, { embeddingDim: dim }).catch((err: Error) => fail(`migrations failed: ${err.message}`));
      consola.success(`migrations: ${JSON.stringify(result)}`);
    } finally {
      await sql.end();
    }
  },
});
