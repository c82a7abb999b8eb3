// Opens the relay on the store the service runs on: Redis Streams when REDIS_URL is set (its
// own connections, same key prefix), else JSONL files under <state>/relay. A Redis that does not
// answer at start-up leaves the relay on files, said in the log, rather than agent mode off.
import { join } from "node:path";
import { log } from "../../common/logger";
import type { OrchestratorConfig } from "../config";
import { fileRelayLog } from "./file-log";
import { redisRelayLog } from "./redis-log";
import { EventRelay, RELAY_DONE_TTL_SECONDS } from "./relay";

const logger = log("relay");

export async function openEventRelay(
  config: Pick<OrchestratorConfig, "redisUrl" | "redisKeyPrefix" | "stateDir" | "claudeTimeout">,
  useRedis: boolean,
): Promise<EventRelay> {
  const liveTtl = config.claudeTimeout + RELAY_DONE_TTL_SECONDS;
  if (useRedis && config.redisUrl) {
    try {
      // Loaded only here: the Redis client is hundreds of modules a service on files never runs.
      const { createRedisStreams } = await import("../../common/kv/redis-streams");
      return new EventRelay(redisRelayLog(await createRedisStreams({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix })), liveTtl);
    } catch (err) {
      logger.warn(`${(err as Error).message}: the non-streaming event relay keeps its streams in files on this pod`);
    }
  }
  return new EventRelay(await fileRelayLog(join(config.stateDir, "relay")), liveTtl);
}
