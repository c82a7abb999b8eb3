// Conversation → agent session mapping (spec: Resources, "Conversation session"): key
// `conv:{agent_id}:{user_hint}:{key}`, value the agent's session UUID, TTL
// AGENT_MODE_SESSION_TTL (refreshed on every turn). In Redis when the key-value store is Redis,
// and always written through to ~/.service/agent_sessions.json (one JSON object, entries with
// their expiry, written whole under a file lock), which is also where it is read from when
// Redis lacks the key or is down.
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { withFileLock } from "../../common/file-lock";
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";

const logger = log("chat");

export interface SessionStore {
  get(convKey: string): Promise<string | undefined>;
  set(convKey: string, sessionId: string): Promise<void>;
}

interface FileEntry {
  session_id: string;
  updated_at: string;
  /** Epoch milliseconds. */
  expires_at: number;
}

type FileMap = Record<string, FileEntry>;

function sessionsFile(stateDir: string): string {
  return join(stateDir, "agent_sessions.json");
}

/** fileName: another map with the same rules (the Responses API's response links use response_links.json). */
export function createSessionStore(opts: { kv?: KeyValueStore; stateDir: string; ttlSeconds: number; fileName?: string }): SessionStore {
  const file = opts.fileName ? join(opts.stateDir, opts.fileName) : sessionsFile(opts.stateDir);
  const redis = opts.kv?.kind === "redis" ? opts.kv : undefined;

  const readMap = async (): Promise<FileMap> => {
    try {
      const parsed = JSON.parse(await readFile(file, "utf8")) as unknown;
      return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as FileMap) : {};
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") logger.warn(`ignoring ${file}: ${(err as Error).message}`);
      return {};
    }
  };

  return {
    async get(convKey) {
      if (redis) {
        try {
          const id = await redis.get(convKey);
          if (id !== null) return id;
        } catch (err) {
          logger.warn(`session of ${convKey}: Redis failed (${(err as Error).message}); reading ${file}`);
        }
      }
      const e = (await readMap())[convKey];
      return e && typeof e.session_id === "string" && e.expires_at > Date.now() ? e.session_id : undefined;
    },
    async set(convKey, sessionId) {
      if (redis) {
        try {
          await redis.set(convKey, sessionId, { ttlSeconds: opts.ttlSeconds });
        } catch (err) {
          logger.warn(`session of ${convKey}: Redis failed (${(err as Error).message}); kept in ${file} only`);
        }
      }
      await mkdir(dirname(file), { recursive: true });
      await withFileLock(file, async () => {
        const now = Date.now();
        const map = await readMap();
        // Expired entries go whenever the file is written, so it does not grow without end.
        for (const [k, e] of Object.entries(map)) if (!(e?.expires_at > now)) delete map[k];
        map[convKey] = { session_id: sessionId, updated_at: new Date(now).toISOString(), expires_at: now + opts.ttlSeconds * 1000 };
        await writeFileAtomic(file, `${JSON.stringify(map, null, 2)}\n`);
      });
    },
  };
}
