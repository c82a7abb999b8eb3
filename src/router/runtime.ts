// Builds everything the router needs at start-up from its config (vault, index, gateway
// clients, bundle store) and hands it to the app; close() releases it all on shutdown.

import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { cleanCrashLeftovers } from "../common/crash-leftovers";
import { maskRedisUrl } from "../common/kv/redis-url";
import { log } from "../common/logger";
import { watchStoragePath } from "../common/storage";
import { createRouterApp } from "./app";
import type { RouterApp, RouterDeps } from "./app-types";
import { DEFAULT_ORCHESTRATOR_URL, type RouterConfig } from "./config";
import { s3BundleStore, vaultBundleStore } from "./dispatch/bundle-store";
import { openIndexStore } from "./index/index";
import { heldCommits } from "./index/types";
import { modelRefine } from "./ingest/refine";
import { type ChatEndpoint, chatBaseUrl, type EmbeddingsEndpoint, embed } from "./llm";
import { extractTranscripts } from "./markers/extract-on-boot";
import type { MarkerDeps } from "./markers/marker";
import { createRouterMcp, type RouterMcp } from "./mcp/listener";
import { httpReranker, llmReranker, type Reranker } from "./search/rerank";
import { SignalHub } from "./signals/hub";
import type { SignalLog } from "./signals/log";
import { BackgroundIndexer, catchUpIndex } from "./tick/index-refresh";
import { LostWritesRecovery } from "./tick/lost-writes";
import { TickQueue } from "./tick/queue";
import { runTick } from "./tick/run";
import { TickScheduler } from "./tick/scheduler";
import { scaffold } from "./vault/scaffold";

const logger = log("router");

export interface RouterRuntime {
  app: RouterApp;
  deps: RouterDeps;
  /** The MCP server (served on PORT_BRAIN_MCP by the stack). */
  mcp: RouterMcp;
  /** Indexes files markers write, just after the response (idle() waits for it). */
  indexer: BackgroundIndexer;
  /** Ends open event streams (GET /signal, MCP sessions) so servers can stop gracefully. */
  endStreams(): Promise<void>;
  close(): Promise<void>;
}

export function chatEndpoint(config: RouterConfig): ChatEndpoint | undefined {
  const baseUrl = chatBaseUrl({ llmApiBase: config.llmApiBase, inferenceUrl: config.inferenceUrl });
  if (!baseUrl) return undefined;
  const apiKey = config.llmApiBase ? config.llmApiKey : config.inferenceApiKey;
  return { baseUrl, apiKey, model: config.briefModel, timeoutMs: config.llmTimeoutMs };
}

export function embeddingsEndpoint(config: RouterConfig): EmbeddingsEndpoint | undefined {
  if (!config.embeddingsUrl) return undefined;
  return {
    url: config.embeddingsUrl,
    apiKey: config.embeddingsApiKey,
    model: config.embeddingsModel,
    dim: config.embeddingsDim,
    timeoutMs: config.llmTimeoutMs,
  };
}

/** The Redis Stream signal log when REDIS_URL is set and Redis answers; else the journal file (undefined). */
async function redisSignalLog(config: RouterConfig): Promise<SignalLog | undefined> {
  if (!config.redisUrl) return undefined;
  const { redisLog } = await import("./signals/redis-log");
  try {
    return await redisLog({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix, keep: 5_000 });
  } catch (err) {
    logger.warn(
      `signal stream: Redis at REDIS_URL=${maskRedisUrl(config.redisUrl)} is not reachable (${(err as Error).message}); using the signal journal file, which only processes sharing DATA_DIR follow`,
    );
    return undefined;
  }
}

/** The rerank stage's reranker: RERANK_URL, else the chat model with RERANK_LLM, else none. */
export function rerankerOf(config: RouterConfig, chatEp: ChatEndpoint | undefined): Reranker | undefined {
  const bounds = { depth: config.rerankDepth, timeoutMs: config.rerankTimeoutMs };
  if (config.rerankUrl)
    return httpReranker({ url: config.rerankUrl, apiKey: config.rerankApiKey, model: config.rerankModel, format: config.rerankFormat, ...bounds });
  if (config.rerankLlm && chatEp) return llmReranker({ ...chatEp, model: config.rerankModel ?? chatEp.model }, bounds);
  return undefined;
}

export async function createRouterRuntime(config: RouterConfig): Promise<RouterRuntime> {
  await scaffold(config.vault);
  await mkdir(config.dataDir, { recursive: true });
  // Named by a 507 storage_full when one fills up (GET /health/deep reports both).
  watchStoragePath("vault", config.vault);
  watchStoragePath("DATA_DIR", config.dataDir);
  // Temp files and locks a crashed process left (its pid gone): before anything waits on them.
  await cleanCrashLeftovers(config.vault);
  if (!config.dataDir.startsWith(`${config.vault}/`)) await cleanCrashLeftovers(config.dataDir);
  // Vectors exist only when an embeddings service is configured.
  const index = await openIndexStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    embeddingDim: config.embeddingsUrl ? config.embeddingsDim : undefined,
    backgroundCheckpoints: config.indexBackgroundCheckpoints,
    holdCommitMs: config.indexCommitHoldMs,
    firstPass: config.indexFirstPass,
  });
  const chatEp = chatEndpoint(config);
  const embedEp = embeddingsEndpoint(config);
  const embedFn = embedEp ? (texts: string[]) => embed(embedEp, texts) : undefined;
  const rerank = rerankerOf(config, chatEp);
  logger.info(
    `index: ${index.kind}${index.hasVectors ? ` with ${index.embeddingDim}-dim vectors` : ""}; briefs: ${chatEp ? `model ${chatEp.model}` : "extractive"}; rerank: ${rerank ? `${rerank.kind}${rerank.model ? ` ${rerank.model}` : ""}, top ${rerank.depth}, ${rerank.timeoutMs} ms` : "off"}`,
  );
  if (config.rerankLlm && !config.rerankUrl && !chatEp)
    logger.warn("RERANK_LLM is set but no chat model is configured (LLM_API_BASE or INFERENCE_URL): search runs without a rerank stage");

  const search = { index, embed: embedFn, chat: chatEp, rerank, vault: config.vault };
  const signals = new SignalHub({ journal: join(config.dataDir, "signal-events.jsonl"), log: await redisSignalLog(config) });
  await signals.open();
  const indexer = new BackgroundIndexer({ vault: config.vault, index, embed: embedFn });
  // A held commit that fails after its answer (a full disk): its notes go back in from their files.
  const lostWrites = new LostWritesRecovery({ vault: config.vault, index, embed: embedFn });
  // Its last writes may not have committed (INDEX_COMMIT_HOLD_MS): the files are the truth.
  if (heldCommits(index)?.stoppedUnclean) await catchUpIndex({ vault: config.vault, index, embed: embedFn });
  const markers: MarkerDeps = {
    vault: config.vault,
    dataDir: config.dataDir,
    signals,
    written: (path) => indexer.written(path),
    signalTtlHours: config.signalTtlHours,
  };
  const ticks = new TickQueue({
    vault: config.vault,
    run: (opts) =>
      runTick(
        {
          vault: config.vault,
          dataDir: config.dataDir,
          index,
          embed: embedFn,
          chat: chatEp,
          markers,
          signalTtlHours: config.signalTtlHours,
          tickIntervalSeconds: config.tickIntervalSeconds,
        },
        opts,
      ),
  });
  await ticks.start();
  const scheduler = new TickScheduler({ vault: config.vault, intervalSeconds: config.tickIntervalSeconds, queue: ticks });
  await scheduler.start();
  const deps: RouterDeps = {
    notes: { vault: config.vault, index },
    config,
    index,
    search,
    ingest: {
      vault: config.vault,
      dataDir: config.dataDir,
      index,
      maxBytes: config.ingestMaxBytes,
      embed: embedFn,
      signals,
      written: (path) => indexer.written(path),
      signalTtlHours: config.signalTtlHours,
      refine: chatEp ? modelRefine(chatEp) : undefined,
    },
    dispatch: {
      ...search,
      bundles: config.s3Bucket
        ? s3BundleStore({
            bucket: config.s3Bucket,
            endpoint: config.s3Endpoint,
            region: config.s3Region,
            accessKeyId: config.s3AccessKeyId,
            secretAccessKey: config.s3SecretAccessKey,
          })
        : vaultBundleStore(config.vault),
      notes: { vault: config.vault, index },
      // Read at each dispatch: the one-process stack fills them in once its orchestrator listens.
      get orchestratorUrl() {
        return config.orchestratorUrl ?? DEFAULT_ORCHESTRATOR_URL;
      },
      get serviceApiKey() {
        return config.serviceApiKey;
      },
      timeoutMs: config.dispatchTimeoutMs,
    },
    markers,
    ticks,
    signals,
    feed: { vault: config.vault, signalTtlHours: config.signalTtlHours, defaultMaxChars: config.feedMaxChars },
    pipeline: {
      vault: config.vault,
      index,
      markerQuietHours: config.pipelineMarkerQuietHours,
      drainStaleMinutes: config.pipelineDrainStaleMinutes,
      signalTtlHours: config.signalTtlHours,
      scanLimit: config.pipelineScanLimit,
      nextTickAt: () => scheduler.nextDueAt,
    },
    deep: {
      vault: config.vault,
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      embeddings: embedEp,
      chat: chatEp,
      timeoutMs: Math.min(config.llmTimeoutMs, 15_000),
    },
  };
  if (config.extractOnBoot) {
    // In the background: start-up does not wait for a machine's worth of transcripts.
    void extractTranscripts(markers, config.transcriptsDir).then(
      (c) =>
        logger.info(
          `EXTRACT_ON_BOOT: ${c.transcripts} transcript(s) in ${config.transcriptsDir}: ${c.recorded} marker(s) recorded, ${c.known} already known, ${c.refused} refused`,
        ),
      (err) => logger.error(`EXTRACT_ON_BOOT: ${(err as Error).message}`),
    );
  }
  const app = createRouterApp(deps);
  const mcp = createRouterMcp(deps);
  let streamsEnded: Promise<void> | undefined;
  const endStreams = () => (streamsEnded ??= Promise.all([signals.close(), mcp.close()]).then(() => {}));
  return {
    app,
    deps,
    mcp,
    indexer,
    endStreams,
    async close() {
      scheduler.stop();
      await endStreams();
      await ticks.close();
      await indexer.close();
      await lostWrites.close();
      await index.close();
    },
  };
}
