// The router's configuration: environment, then ~/.router/.env, then these defaults.
// Built once in main.ts, passed down.
import { join, resolve } from "node:path";
import { edgeSettings } from "../common/config/edge-settings";
import { readDotenv } from "../common/config/files";
import { bool, int, list, oneOf, port, str, url } from "../common/config/parsers";
import { type ConfigOf, loadSettings, type Settings } from "../common/config/settings";
import { FEED_CHARS } from "./feed/feed";
import { FIRST_PASS_MODES } from "./index/types.ts";

export const routerSettings = {
  host: { env: "ROUTER_HOST", fileKey: "ROUTER_HOST", default: "127.0.0.1", parse: str(), doc: "bind address of the API and MCP listeners" },
  port: { env: "PORT_BRAIN_API", fileKey: "PORT_BRAIN_API", default: "8103", parse: port(), doc: "HTTP API port" },
  mcpPort: { env: "PORT_BRAIN_MCP", fileKey: "PORT_BRAIN_MCP", default: "8104", parse: port(), doc: "MCP listener port" },
  token: {
    env: "KB_ROUTER_TOKEN",
    fileKey: "KB_ROUTER_TOKEN",
    default: undefined,
    defaultDoc: "none",
    parse: str(),
    secret: true,
    doc: "bearer token; with KB_ROUTER_TOKENS unset too, every endpoint answers 503",
  },
  tokens: {
    env: "KB_ROUTER_TOKENS",
    fileKey: "KB_ROUTER_TOKENS",
    default: "",
    defaultDoc: "none",
    parse: list(),
    secret: true,
    doc: "more accepted tokens, comma-separated (for rotation)",
  },
  maxBodyBytes: {
    env: "MAX_BODY_BYTES",
    fileKey: "MAX_BODY_BYTES",
    default: String(10 * 1024 * 1024),
    defaultDoc: "10485760 (10 MiB)",
    parse: int(1, 2 ** 31),
    doc: "largest request body; larger → 413",
  },
  vault: {
    env: "VAULT_PATH",
    fileKey: "VAULT_PATH",
    default: "./vault",
    parse: str(),
    doc: "the vault folder (`--vault` wins); created and scaffolded at start",
  },
  dataDir: { env: "DATA_DIR", fileKey: "DATA_DIR", default: undefined, defaultDoc: "`<vault>/.brain`", parse: str(), doc: "where the SQLite index lives" },
  databaseUrl: {
    env: "DATABASE_URL",
    fileKey: "DATABASE_URL",
    default: undefined,
    defaultDoc: "none (SQLite)",
    parse: url(),
    secret: true,
    doc: "Postgres for the index (tsvector + GIN; pgvector when embeddings are configured)",
  },
  redisUrl: {
    env: "REDIS_URL",
    fileKey: "REDIS_URL",
    default: undefined,
    defaultDoc: "none (the signal journal file)",
    parse: url(),
    secret: true,
    doc: "Redis for the signal stream shared by the router processes of one vault (a Redis Stream)",
  },
  redisKeyPrefix: { env: "REDIS_KEY_PREFIX", fileKey: "REDIS_KEY_PREFIX", default: "router", parse: str(), doc: "key namespace in Redis (one per vault)" },
  ingestMaxBytes: {
    env: "INGEST_MAX_BYTES",
    fileKey: "INGEST_MAX_BYTES",
    default: String(1024 * 1024),
    defaultDoc: "1048576 (1 MiB)",
    parse: int(1, 2 ** 30),
    doc: "largest `content` POST /ingest accepts; larger → 413",
  },
  indexCommitHoldMs: {
    env: "INDEX_COMMIT_HOLD_MS",
    fileKey: "INDEX_COMMIT_HOLD_MS",
    default: "10",
    parse: int(0, 1000),
    doc: "SQLite index: a write is answered once this process's searches see it and committed with the writes of the next this-many ms (0 = commit each before answering); after a crash the router re-indexes the vault's changed files before it serves",
  },
  indexFirstPass: {
    env: "INDEX_FIRST_PASS",
    fileKey: "INDEX_FIRST_PASS",
    default: "background",
    parse: oneOf(FIRST_PASS_MODES),
    doc: "SQLite index: searches answer from per-word lists of the best notes when those prove the exact answer; `background` builds a word's list in a worker thread at its first use, `inline` in the request, `off` runs every search as one full-text query",
  },
  indexBackgroundCheckpoints: {
    env: "INDEX_BACKGROUND_CHECKPOINTS",
    fileKey: "INDEX_BACKGROUND_CHECKPOINTS",
    default: "true",
    parse: bool(),
    doc: "SQLite index: copy the write-ahead log into the database file in a worker thread (false: in the committing request, as SQLite does by default)",
  },
  embeddingsUrl: {
    env: "EMBEDDINGS_URL",
    fileKey: "EMBEDDINGS_URL",
    default: undefined,
    defaultDoc: "none (BM25 only)",
    parse: url(),
    doc: "OpenAI-compatible embeddings service (…/v1/embeddings); enables hybrid search",
  },
  embeddingsModel: { env: "EMBEDDINGS_MODEL", fileKey: "EMBEDDINGS_MODEL", default: "text-embedding-3-small", parse: str(), doc: "embeddings model name" },
  embeddingsDim: {
    env: "EMBEDDINGS_DIM",
    fileKey: "EMBEDDINGS_DIM",
    default: "1536",
    parse: int(1, 16000),
    doc: "embedding dimension; a model answering another dimension is refused",
  },
  embeddingsApiKey: {
    env: "EMBEDDINGS_API_KEY",
    fileKey: "EMBEDDINGS_API_KEY",
    default: undefined,
    defaultDoc: "none",
    parse: str(),
    secret: true,
    doc: "bearer for the embeddings service",
  },
  llmApiBase: {
    env: "LLM_API_BASE",
    fileKey: "LLM_API_BASE",
    default: undefined,
    defaultDoc: "none",
    parse: url(),
    doc: "OpenAI-compatible gateway base URL (…/v1) for briefs and classification",
  },
  llmApiKey: { env: "LLM_API_KEY", fileKey: "LLM_API_KEY", default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "bearer for LLM_API_BASE" },
  inferenceUrl: {
    env: "INFERENCE_URL",
    fileKey: "INFERENCE_URL",
    default: undefined,
    defaultDoc: "none",
    parse: url(),
    doc: "local Ollama-style server (used when LLM_API_BASE is unset; /v1 is added)",
  },
  inferenceApiKey: {
    env: "INFERENCE_API_KEY",
    fileKey: "INFERENCE_API_KEY",
    default: undefined,
    defaultDoc: "none",
    parse: str(),
    secret: true,
    doc: "bearer for INFERENCE_URL",
  },
  briefModel: { env: "BRIEF_MODEL", fileKey: "BRIEF_MODEL", default: "gpt-4o-mini", parse: str(), doc: "chat model for briefs and classification" },
  llmTimeoutMs: { env: "LLM_TIMEOUT_MS", fileKey: "LLM_TIMEOUT_MS", default: "60000", parse: int(100, 600_000), doc: "gateway timeout; past it → 504" },
  rerankUrl: {
    env: "RERANK_URL",
    fileKey: "RERANK_URL",
    default: undefined,
    defaultDoc: "none (no rerank stage)",
    parse: url(),
    doc: "rerank endpoint (text-embeddings-inference, llama.cpp's server, Jina, Cohere: …/rerank); reorders the top RERANK_DEPTH hits of /search",
  },
  rerankApiKey: {
    env: "RERANK_API_KEY",
    fileKey: "RERANK_API_KEY",
    default: undefined,
    defaultDoc: "none",
    parse: str(),
    secret: true,
    doc: "bearer for RERANK_URL",
  },
  rerankModel: {
    env: "RERANK_MODEL",
    fileKey: "RERANK_MODEL",
    default: undefined,
    defaultDoc: "none (BRIEF_MODEL with RERANK_LLM)",
    parse: str(),
    doc: "model named to RERANK_URL (Cohere and Jina need one); with RERANK_LLM, the chat model that judges",
  },
  rerankFormat: {
    env: "RERANK_FORMAT",
    fileKey: "RERANK_FORMAT",
    default: "documents",
    parse: oneOf(["documents", "texts"] as const),
    doc: "request body for RERANK_URL: `documents` = {model, query, documents, top_n} (Cohere, Jina, llama.cpp), `texts` = {query, texts} (text-embeddings-inference); either answer shape is read",
  },
  rerankLlm: {
    env: "RERANK_LLM",
    fileKey: "RERANK_LLM",
    default: "false",
    parse: bool(),
    doc: "1 = without RERANK_URL, rerank with a yes/no relevance prompt per hit to the chat model (LLM_API_BASE / INFERENCE_URL)",
  },
  rerankDepth: { env: "RERANK_DEPTH", fileKey: "RERANK_DEPTH", default: "40", parse: int(2, 100), doc: "how many fused hits the reranker sees" },
  rerankTimeoutMs: {
    env: "RERANK_TIMEOUT_MS",
    fileKey: "RERANK_TIMEOUT_MS",
    default: "2000",
    parse: int(50, 600_000),
    doc: "bound on the rerank stage; past it (or on any reranker failure) /search answers the fused order and says why in `rerank`",
  },
  orchestratorUrl: {
    env: "ORCHESTRATOR_URL",
    fileKey: "ORCHESTRATOR_URL",
    default: undefined,
    defaultDoc: "this process's own orchestrator (one-process stack), else `http://127.0.0.1:8200`",
    parse: url(),
    doc: "where /dispatch submits jobs",
  },
  serviceApiKey: {
    env: "SERVICE_API_KEY",
    fileKey: "SERVICE_API_KEY",
    default: undefined,
    defaultDoc: "none",
    parse: str(),
    secret: true,
    doc: "API key /dispatch sends to the orchestrator; in the one-process stack with ORCHESTRATOR_URL unset, the orchestrator's first `SERVICE_API_KEYS` entry",
  },
  dispatchTimeoutMs: {
    env: "DISPATCH_TIMEOUT_MS",
    fileKey: "DISPATCH_TIMEOUT_MS",
    default: "30000",
    parse: int(100, 600_000),
    doc: "how long /dispatch waits for the orchestrator to accept the job; past it 504 `orchestrator_timeout`",
  },
  s3Bucket: {
    env: "S3_BUCKET",
    fileKey: "S3_BUCKET",
    default: undefined,
    defaultDoc: "none (vault bundles/)",
    parse: str(),
    doc: "object store bucket for dispatch bundles",
  },
  s3Endpoint: {
    env: "S3_ENDPOINT",
    fileKey: "S3_ENDPOINT",
    default: undefined,
    defaultDoc: "none",
    parse: url(),
    doc: "object store endpoint (S3-compatible)",
  },
  s3Region: { env: "S3_REGION", fileKey: "S3_REGION", default: "us-east-1", parse: str(), doc: "object store region" },
  s3AccessKeyId: {
    env: "S3_ACCESS_KEY_ID",
    fileKey: "S3_ACCESS_KEY_ID",
    default: undefined,
    defaultDoc: "none",
    parse: str(),
    secret: true,
    doc: "object store access key",
  },
  s3SecretAccessKey: {
    env: "S3_SECRET_ACCESS_KEY",
    fileKey: "S3_SECRET_ACCESS_KEY",
    default: undefined,
    defaultDoc: "none",
    parse: str(),
    secret: true,
    doc: "object store secret key",
  },
  tickIntervalSeconds: {
    env: "TICK_INTERVAL_SECONDS",
    fileKey: "TICK_INTERVAL_SECONDS",
    default: "7200",
    parse: int(0, 31_536_000),
    doc: "the in-process scheduler enqueues a tick this often (seconds); 0 turns it off",
  },
  signalTtlHours: {
    env: "SIGNAL_TTL_HOURS",
    fileKey: "SIGNAL_TTL_HOURS",
    default: "72",
    parse: int(1, 87_600),
    doc: "a tick sweeps open signals quiet this long out of signals.md (critical ones stay)",
  },
  signalHeartbeatSeconds: {
    env: "SIGNAL_HEARTBEAT_SECONDS",
    fileKey: "SIGNAL_HEARTBEAT_SECONDS",
    default: "15",
    parse: int(1, 240),
    doc: "keep-alive comment interval on GET /signal and the MCP SSE streams",
  },
  feedMaxChars: {
    env: "FEED_MAX_CHARS",
    fileKey: "FEED_MAX_CHARS",
    default: "6000",
    parse: int(FEED_CHARS.min, FEED_CHARS.max),
    doc: "default size of GET /feed's inject_blocks (the `max_chars` query overrides it)",
  },
  pipelineMarkerQuietHours: {
    env: "PIPELINE_MARKER_QUIET_HOURS",
    fileKey: "PIPELINE_MARKER_QUIET_HOURS",
    default: "72",
    parse: int(1, 87_600),
    doc: "the pipeline's ingest stage warns when no marker arrived for this long",
  },
  pipelineDrainStaleMinutes: {
    env: "PIPELINE_DRAIN_STALE_MINUTES",
    fileKey: "PIPELINE_DRAIN_STALE_MINUTES",
    default: "30",
    parse: int(1, 525_600),
    doc: "the drain stage fails when a tick request has waited this long unconsumed",
  },
  pipelineScanLimit: {
    env: "PIPELINE_SCAN_LIMIT",
    fileKey: "PIPELINE_SCAN_LIMIT",
    default: "20000",
    parse: int(100, 10_000_000),
    doc: "most directory entries one pipeline report reads (its evidence says when it stopped short)",
  },
  extractOnBoot: {
    env: "EXTRACT_ON_BOOT",
    fileKey: "EXTRACT_ON_BOOT",
    default: "false",
    parse: bool(),
    doc: "1 = at start, harvest markers once from the Claude Code transcripts under CLAUDE_TRANSCRIPTS_DIR",
  },
  transcriptsDir: {
    env: "CLAUDE_TRANSCRIPTS_DIR",
    fileKey: "CLAUDE_TRANSCRIPTS_DIR",
    default: "~/.claude/projects",
    parse: str(),
    doc: "where EXTRACT_ON_BOOT looks for transcripts (<project>/<session>.jsonl)",
  },
  ...edgeSettings("dotenv"),
} satisfies Settings;

export type RouterConfig = Omit<ConfigOf<typeof routerSettings>, "token" | "tokens" | "dataDir"> & {
  dataDir: string;
  /** KB_ROUTER_TOKEN and KB_ROUTER_TOKENS together; empty = fail closed. */
  tokens: string[];
  home: string;
  envFile: string;
};

export function loadRouterConfig(env: Record<string, string | undefined>, home: string, overrides: { vault?: string } = {}): RouterConfig {
  const envFile = join(home, ".router", ".env");
  const { token, tokens, ...values } = loadSettings(routerSettings, { env, file: readDotenv(envFile), filePath: envFile, home });
  const all = [...(token ? [token] : []), ...tokens];
  const vault = resolve(overrides.vault ?? values.vault);
  return {
    ...values,
    vault,
    dataDir: resolve(values.dataDir ?? join(vault, ".brain")),
    tokens: [...new Set(all)],
    home,
    envFile,
  };
}

/** Where /dispatch goes when ORCHESTRATOR_URL is unset and no orchestrator runs in this process. */
export const DEFAULT_ORCHESTRATOR_URL = "http://127.0.0.1:8200";
