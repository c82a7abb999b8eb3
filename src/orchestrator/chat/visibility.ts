// Stream visibility config (spec: Resources, "Stream visibility config"; Events, "Slash
// tokens"): per agent, sticky, no expiry; per user of the agent when the request names one
// (issue 15 part 3: scope `{agent}:{user}`, the agent's config as its default). Kept in the key-value store when it is Redis, and
// always written through to ~/.service/stream_config/<agent_id>.json too, so a Redis that keeps
// nothing on disk, or is down, still finds the last toggles.
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";
import { segment } from "./resolution";

const logger = log("chat");

export interface Visibility {
  show_thinking: boolean;
  show_tools: boolean;
  /** Assistant text at all (narration, final, legacy text). */
  show_text: boolean;
  show_narration: boolean;
  show_final: boolean;
  /** Text deltas as they arrive (legacy text chunks) instead of narration/final per closed block. */
  live_text: boolean;
}

/** A new agent: only assistant text (narration and final) is visible. */
export const DEFAULT_VISIBILITY: Readonly<Visibility> = Object.freeze({
  show_thinking: false,
  show_tools: false,
  show_text: true,
  show_narration: true,
  show_final: true,
  live_text: false,
});

const KEYS = Object.keys(DEFAULT_VISIBILITY) as (keyof Visibility)[];

/** Whatever was stored, completed with the defaults (older or hand-edited records). */
function normalizeVisibility(raw: unknown, defaults: Readonly<Visibility> = DEFAULT_VISIBILITY): Visibility {
  const v: Visibility = { ...defaults };
  if (raw && typeof raw === "object") {
    for (const k of KEYS) {
      const x = (raw as Record<string, unknown>)[k];
      if (typeof x === "boolean") v[k] = x;
    }
  }
  return v;
}

export interface VisibilityStore {
  /** The scope's config, or the defaults when nothing is stored for it. */
  get(agentId: string): Promise<Visibility>;
  /** The scope's config, or undefined when nothing is stored for it. */
  find(scope: string): Promise<Visibility | undefined>;
  set(agentId: string, v: Visibility): Promise<void>;
}

/** A name safe as one file name: the agent id as-is when it is plain, else percent-encoded. */
export const safeFileName = (id: string): string =>
  /^[A-Za-z0-9._-]+$/.test(id) && id !== "." && id !== ".." ? id : encodeURIComponent(id).replaceAll(".", "%2E");

/** The scope of one end user's config for an agent: `{agent}:{user}`, the user escaped so it cannot reach another scope. */
export function userScope(agentId: string, user: string): string {
  return `${agentId}:${segment(user)}`;
}

export function createVisibilityStore(opts: { kv?: KeyValueStore; stateDir: string; defaults?: Partial<Visibility> }): VisibilityStore {
  const defaults: Visibility = { ...DEFAULT_VISIBILITY, ...opts.defaults };
  const dir = join(opts.stateDir, "stream_config");
  const redis = opts.kv?.kind === "redis" ? opts.kv : undefined;
  const fileOf = (agentId: string) => join(dir, `${safeFileName(agentId)}.json`);
  const kvKey = (agentId: string) => `stream_config:${agentId}`;

  const readFileConfig = async (agentId: string): Promise<Visibility | undefined> => {
    try {
      return normalizeVisibility(JSON.parse(await readFile(fileOf(agentId), "utf8")), defaults);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") logger.warn(`ignoring ${fileOf(agentId)}: ${(err as Error).message}`);
      return undefined;
    }
  };

  const find = async (agentId: string): Promise<Visibility | undefined> => {
    if (redis) {
      try {
        const raw = await redis.get(kvKey(agentId));
        if (raw !== null) return normalizeVisibility(JSON.parse(raw), defaults);
      } catch (err) {
        logger.warn(`stream config of ${agentId}: Redis failed (${(err as Error).message}); using ${fileOf(agentId)}`);
      }
    }
    return readFileConfig(agentId);
  };

  return {
    find,
    async get(agentId) {
      return (await find(agentId)) ?? { ...defaults };
    },
    async set(agentId, v) {
      const text = JSON.stringify(normalizeVisibility(v, defaults));
      if (redis) {
        try {
          await redis.set(kvKey(agentId), text);
        } catch (err) {
          logger.warn(`stream config of ${agentId}: Redis failed (${(err as Error).message}); kept in ${fileOf(agentId)} only`);
        }
      }
      await mkdir(dir, { recursive: true });
      await writeFileAtomic(fileOf(agentId), `${text}\n`);
    },
  };
}
