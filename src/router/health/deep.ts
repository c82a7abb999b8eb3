// GET /health/deep (spec: "/health/deep"): three real probes, each {name, verdict, ms, message}.
//   vault       — a write round-trip: write a random token to a hidden file, read it back, remove it;
//   embeddings  — read the vector column's dimension from the index's database, then run a real
//                 embedding call and check the model's dimension against it;
//   completion  — a one-token completion through the gateway with the configured key.
// A probe is "skipped" only when its dependency is not configured, and says which setting
// would configure it. (A missing server token never reaches here: the router answers 503
// server_token_unset on every path, and that answer is the hard failure.)
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { DomainError } from "../../common/domain-error";
import { type StorageStatus, storageStatus } from "../../common/storage";
import { SQLITE_INDEX_FILE } from "../index/sqlite/store";
import { type ChatEndpoint, chat, type EmbeddingsEndpoint, embeddingsRoute } from "../llm";

export type ProbeVerdict = "ok" | "fail" | "skipped";

export interface Probe {
  name: "vault" | "embeddings" | "completion";
  verdict: ProbeVerdict;
  ms: number;
  message: string;
}

export interface DeepReport {
  status: "ok" | "fail";
  probes: Probe[];
  /** The router's storage paths (the vault, DATA_DIR) and their free space: which one is full. */
  storage: StorageStatus[];
  checked_at: string;
}

export interface DeepDeps {
  vault: string;
  /** Where the index lives: Postgres, else the SQLite file under the data directory. */
  databaseUrl?: string;
  dataDir: string;
  embeddings?: EmbeddingsEndpoint;
  chat?: ChatEndpoint;
  /** Bound for each network probe. */
  timeoutMs: number;
}

const PROBE_TEXT = "brain-stack deep health probe";

async function timed(name: Probe["name"], fn: () => Promise<{ verdict: ProbeVerdict; message: string }>): Promise<Probe> {
  const started = performance.now();
  let out: { verdict: ProbeVerdict; message: string };
  try {
    out = await fn();
  } catch (err) {
    out = { verdict: "fail", message: (err as Error).message };
  }
  return { name, verdict: out.verdict, ms: Math.round((performance.now() - started) * 10) / 10, message: out.message };
}

async function vaultProbe(vault: string) {
  const token = randomBytes(16).toString("hex");
  const path = join(vault, `.health-probe-${token}.tmp`);
  try {
    await writeFileAtomic(path, token);
    const back = await readFile(path, "utf8");
    if (back !== token) return { verdict: "fail" as const, message: `read back ${JSON.stringify(back.slice(0, 40))} after writing ${token} to ${vault}` };
    return { verdict: "ok" as const, message: `wrote, read back and removed a file in ${vault}` };
  } finally {
    await unlink(path).catch(() => {});
  }
}

/** The dimension of the index's vector column, read from the database itself. */
async function storedVectorDimension(deps: Pick<DeepDeps, "databaseUrl" | "dataDir" | "timeoutMs">): Promise<{ dim: number | undefined; where: string }> {
  if (deps.databaseUrl) {
    // Loaded here, not at start: the probe runs only on request.
    const [{ default: postgres }, { storedDimension }] = await Promise.all([import("postgres"), import("../index/migrate")]);
    const sql = postgres(deps.databaseUrl, { max: 1, connect_timeout: Math.ceil(deps.timeoutMs / 1000), onnotice: () => {} });
    try {
      return { dim: await storedDimension(sql, "public"), where: "PostgreSQL column index_chunks.embedding" };
    } finally {
      await sql.end({ timeout: 1 }).catch(() => {});
    }
  }
  const file = join(deps.dataDir, SQLITE_INDEX_FILE);
  const db = new Database(file, { readonly: true });
  try {
    const row = db.query<{ value: string }, []>("SELECT value FROM index_meta WHERE key = 'embedding_dim'").get();
    return { dim: row ? Number(row.value) : undefined, where: `SQLite ${file}` };
  } finally {
    db.close();
  }
}

async function embeddingsProbe(deps: DeepDeps) {
  const ep = deps.embeddings;
  if (!ep) return { verdict: "skipped" as const, message: "EMBEDDINGS_URL is not set: no embeddings service to probe (search runs on BM25 alone)" };
  const { dim, where } = await storedVectorDimension(deps);
  if (dim === undefined) return { verdict: "fail" as const, message: `EMBEDDINGS_URL is set but the index has no vector column (${where})` };
  const res = await fetch(embeddingsRoute(ep.url), {
    method: "POST",
    headers: { "content-type": "application/json", ...(ep.apiKey ? { authorization: `Bearer ${ep.apiKey}` } : {}) },
    body: JSON.stringify({ model: ep.model, input: [PROBE_TEXT] }),
    signal: AbortSignal.timeout(deps.timeoutMs),
  }).catch((err: Error) => {
    throw new Error(
      err.name === "TimeoutError"
        ? `the embeddings service did not answer within ${deps.timeoutMs} ms`
        : `the embeddings service is unreachable: ${err.message}`,
    );
  });
  if (!res.ok) {
    const text = (await res.text().catch(() => "")).slice(0, 200);
    const why = res.status === 401 || res.status === 403 ? " (it rejected EMBEDDINGS_API_KEY)" : "";
    return { verdict: "fail" as const, message: `the embeddings service answered ${res.status}${why}${text ? `: ${text}` : ""}` };
  }
  const body = (await res.json().catch(() => null)) as { data?: Array<{ embedding?: unknown }> } | null;
  const vector = body?.data?.[0]?.embedding;
  if (!Array.isArray(vector)) return { verdict: "fail" as const, message: "the embeddings service answered without data[0].embedding" };
  if (vector.length !== dim) {
    return {
      verdict: "fail" as const,
      message: `model ${ep.model} returns ${vector.length} dimensions but the index's vector column holds ${dim} (${where}): configure the model the index was built with, or rebuild the index`,
    };
  }
  return { verdict: "ok" as const, message: `model ${ep.model} returned ${vector.length} dimensions, matching the index's vector column (${where})` };
}

async function completionProbe(deps: DeepDeps) {
  const ep = deps.chat;
  if (!ep) return { verdict: "skipped" as const, message: "neither LLM_API_BASE nor INFERENCE_URL is set: no gateway to probe (briefs are extractive)" };
  try {
    const answer = await chat({ ...ep, timeoutMs: Math.min(ep.timeoutMs, deps.timeoutMs) }, [{ role: "user", content: "Answer with one word: ok" }], {
      maxTokens: 1,
    });
    return { verdict: "ok" as const, message: `model ${answer.model} answered a one-token completion at ${ep.baseUrl}` };
  } catch (err) {
    const status = err instanceof DomainError ? (err.details as { gateway_status?: number } | undefined)?.gateway_status : undefined;
    if (status === 401 || status === 403)
      return { verdict: "fail" as const, message: `the gateway rejected the configured key (${status}): ${(err as Error).message}` };
    throw err;
  }
}

export async function deepReport(deps: DeepDeps): Promise<DeepReport> {
  const checkedAt = new Date().toISOString();
  const probes = await Promise.all([
    timed("vault", () => vaultProbe(deps.vault)),
    timed("embeddings", () => embeddingsProbe(deps)),
    timed("completion", () => completionProbe(deps)),
  ]);
  const storage = storageStatus([
    { role: "vault", path: deps.vault },
    { role: "DATA_DIR", path: deps.dataDir },
  ]);
  const failed = probes.some((p) => p.verdict === "fail") || storage.some((s) => s.full);
  return { status: failed ? "fail" : "ok", probes, storage, checked_at: checkedAt };
}
