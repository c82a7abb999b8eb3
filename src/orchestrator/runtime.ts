// Builds everything the orchestrator needs at start-up from its config (stores, job runner,
// recovery) and hands it to the app; close() releases it all on shutdown.
//
// Shutdown: close() stops starting jobs; queued jobs stay queued in the store and this pod
// picks them up when it starts again; jobs still running are stopped (SIGTERM, then SIGKILL)
// and recorded failed ("interrupted: the service stopped …"). To let running jobs finish,
// drain first (POST /admin/drain or `service-cli drain`, e.g. from a preStop hook).
import { join } from "node:path";
import { mcpLimitsOf } from "../common/config/edge-settings";
import { cleanCrashLeftovers } from "../common/crash-leftovers";
import { createFileStore } from "../common/kv/file-store";
import type { KeyValueStore } from "../common/kv/store";
import { log } from "../common/logger";
import { type StoragePath, watchStoragePath } from "../common/storage";
import { secretsNamed } from "./agent/env";
import { ROOT_WITHOUT_SANDBOX, rootWithoutSandbox } from "./agent/root-sandbox";
import { createAgentModeDeps } from "./agent-mode/deps";
import { createOrchestratorApp } from "./app";
import type { OrchestratorApp } from "./app-types";
import type { OrchestratorConfig } from "./config";
import { executeJob } from "./execution/execute";
import type { Executor, ProfileLike } from "./execution/executor";
import { afterSync } from "./hooks-package/after-sync";
import { prepareHooksPackage } from "./hooks-package/hooks-package";
import { localJobChangeFeed } from "./jobs/changes";
import { createFileJobEventStore, jobEventLog } from "./jobs/events";
import { createFileJobStore } from "./jobs/file-store";
import { createKvJobStore } from "./jobs/kv-store";
import { createMergedJobStore } from "./jobs/merged-store";
import { createEmbeddedQueue, type JobQueue } from "./jobs/queue";
import { createJobService, type JobService } from "./jobs/service";
import type { JobStore } from "./jobs/store";
import { recordJobEnd } from "./loop/job-loop";
import { defaultRouterCli, routerCliCommand } from "./loop/router-cli";
import { type ListedProfileCatalog, profileCatalog } from "./profiles/catalog";
import type { Profile } from "./profiles/profile";
import { type CompanionSync, createCompanionSync } from "./repos/companions";
import { McpSseSessions } from "./routes/mcp";
import { createTeamChatDeps, type TeamChatDeps } from "./routes/teamchat";
import { createJobTracing } from "./telemetry/spans";

const logger = log("orchestrator");

export interface OrchestratorRuntime {
  app: OrchestratorApp;
  jobs: JobService;
  /** The profile catalog jobs run with (what GET /profiles and the MCP tools list). */
  profiles: ListedProfileCatalog<Profile>;
  /** Ends long-lived streams (MCP SSE sessions) so the servers' graceful stop is not held open by them. */
  beforeStop(): Promise<void>;
  close(): Promise<void>;
}

/** The execution half: the agent runner and the profiles it runs with. */
export interface Execution<P extends ProfileLike> {
  execute: Executor<P>;
  profiles: ListedProfileCatalog<P>;
}

/** Where job records go (spec: SERVICE_JOBS_DIR is job-state/ under the shared root in orchestrated deployments). */
function jobsDirOf(config: OrchestratorConfig): string {
  const defaultDir = join(config.home, ".service", "jobs");
  return config.sharedFsRoot && config.jobsDir === defaultDir ? join(config.sharedFsRoot, "job-state") : config.jobsDir;
}

/**
 * Where queued jobs wait: BullMQ on Redis, shared by every process, when REDIS_URL is set; else
 * this process's own queue (issue 17).
 */
async function openQueue(config: OrchestratorConfig): Promise<JobQueue> {
  if (!config.redisUrl) return createEmbeddedQueue({ podName: config.podName, maxParallel: config.maxParallelJobs });
  // BullMQ loads only when REDIS_URL is set.
  const { createBullQueue } = await import("./jobs/bullmq-queue");
  return createBullQueue({
    url: config.redisUrl,
    keyPrefix: config.redisKeyPrefix,
    podName: config.podName,
    maxParallel: config.maxParallelJobs,
    lockMs: config.jobLockSeconds * 1000,
    keepSeconds: config.jobTtl,
  });
}

/** The paths the orchestrator writes to: named by a 507 storage_full and reported by GET /admin/status. */
export function orchestratorStoragePaths(config: OrchestratorConfig): StoragePath[] {
  return [
    { role: "SERVICE_JOBS_DIR", path: jobsDirOf(config) },
    { role: "state directory", path: config.stateDir },
  ];
}

export async function openStores(config: OrchestratorConfig): Promise<{ kv: KeyValueStore; store: JobStore }> {
  // Temp files and locks a crashed process left (its pid gone) in the job and key-value folders.
  for (const dir of [jobsDirOf(config), join(config.stateDir, "kv")]) await cleanCrashLeftovers(dir);
  const files = await createFileJobStore({ dir: jobsDirOf(config), ttlSeconds: config.jobTtl });
  if (!config.redisUrl) {
    return { kv: await createFileStore({ dir: join(config.stateDir, "kv") }), store: files };
  }
  // The Redis client loads only when REDIS_URL is set.
  const { connectRedisLazily } = await import("../common/kv/redis-connect");
  const kv = await connectRedisLazily({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix });
  return { kv, store: createMergedJobStore(createKvJobStore(kv, { ttlSeconds: config.jobTtl }), files) };
}

export async function createOrchestratorRuntime(config: OrchestratorConfig): Promise<OrchestratorRuntime> {
  if (rootWithoutSandbox(process.env)) logger.warn(ROOT_WITHOUT_SANDBOX);
  const named = secretsNamed(config.agentEnv);
  if (named.length > 0) logger.warn(`SERVICE_AGENT_ENV names ${named.join(", ")}: the service's own secrets never reach the agent; left out`);
  if (config.routerUrl && config.routerToken) {
    const cli = config.routerCli ? { command: config.routerCli, why: "ROUTER_CLI_BINARY" } : { command: routerCliCommand(), why: defaultRouterCli().why };
    const line = `agents' hooks run ${cli.command} (${cli.why}); they feed ${config.routerUrl}`;
    if (cli.why.startsWith("by name")) logger.warn(line);
    else logger.info(line);
  }
  const execution = await jobExecution(config);
  const tracing = createJobTracing(config);
  const { kv, store } = await openStores(config);
  const storage = orchestratorStoragePaths(config);
  for (const p of storage) watchStoragePath(p.role, p.path);
  await prepareHooksPackage(config);
  // A broken agent package stops start-up with a message naming the file.
  const agentMode = await createAgentModeDeps(config, kv).catch(async (err) => {
    await store.close();
    await kv.close();
    throw err;
  });
  // Team chat needs agent mode; a sovereign-cloud endpoint or a missing agent stops start-up.
  let teamChat: TeamChatDeps | undefined;
  try {
    teamChat = createTeamChatDeps(config, kv, agentMode);
  } catch (err) {
    await agentMode?.close();
    await store.close();
    await kv.close();
    throw err;
  }
  const jobEvents = config.redisUrl
    ? (await import("./jobs/events/redis-store")).createRedisJobEventStore({
        url: config.redisUrl,
        keyPrefix: config.redisKeyPrefix,
        ttlSeconds: config.jobTtl,
      })
    : createFileJobEventStore({ dir: jobsDirOf(config), ttlSeconds: config.jobTtl });
  const jobChanges = config.redisUrl
    ? (await import("./jobs/changes-redis")).redisJobChangeFeed({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix })
    : localJobChangeFeed();
  const jobs = createJobService({
    store,
    kv,
    events: jobEventLog(jobEvents),
    changes: jobChanges,
    queue: await openQueue(config),
    execute: tracing.trace(execution.execute),
    profiles: execution.profiles,
    podName: config.podName,
    maxParallel: config.maxParallelJobs,
    allowLocalRepos: config.allowLocalRepos,
    reconcileMs: config.jobLockSeconds * 1000,
    defaultTimeoutSeconds: config.claudeTimeout,
    ...(agentMode && { agentName: agentMode.agent.agentId }),
  });
  const removed = await store.sweep();
  if (removed > 0) logger.info(`removed ${removed} expired job record(s)`);
  await jobs.recover();

  const mcpSessions = new McpSseSessions(mcpLimitsOf(config));
  const companionSync = createCompanionSync(config);
  const companions: CompanionSync = {
    async sync(target) {
      const results = await companionSync.sync(target);
      await execution.profiles.list(); // the hooks package may have brought profiles
      await afterSync(config, results, agentMode);
      return results;
    },
  };
  const app = createOrchestratorApp({
    config,
    jobs,
    jobEvents,
    jobChanges,
    profiles: execution.profiles,
    companions,
    mcpSessions,
    agentMode,
    teamChat,
    storage,
  });
  return {
    app,
    jobs,
    profiles: execution.profiles,
    async beforeStop() {
      // Running chat turns end with an error chunk and [DONE] rather than a cut connection.
      jobChanges.endWatches();
      await Promise.all([mcpSessions.close(), agentMode?.close(), teamChat?.close()]);
    },
    async close() {
      await mcpSessions.close();
      await agentMode?.close();
      await teamChat?.close();
      await jobs.close();
      await jobEvents.close();
      await jobChanges.close();
      await tracing.shutdown();
      await store.close();
      await kv.close();
    },
  };
}

/** The real runner: clone cache, worktree, the agent CLI, auto-PR (execution/execute.ts). */
async function jobExecution(config: OrchestratorConfig): Promise<Execution<Profile>> {
  return {
    execute: (req) => executeJob({ ...req, config }).then((result) => recordJobEnd(config, req, result)),
    profiles: await profileCatalog(config),
  };
}
