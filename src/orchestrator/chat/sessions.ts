// Conversation → agent session mapping (spec: Resources, "Conversation session"): key
// `conv:{agent_id}:{user_hint}:{key}`, value the agent's session UUID, TTL
// AGENT_MODE_SESSION_TTL (refreshed on every turn). In Redis when the key-value store is Redis,
// and always written through to ~/.service/agent_sessions.json (one JSON object, entries with
// their expiry, written whole under a file lock), which is also where it is read from when
// Redis lacks the key or is down. A mapping the file could not take (a full disk) is held in
// memory, answered from there, and written with the next write that succeeds, so the next turn
// still resumes its session; a restart before then loses it.
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { withFileLock } from "../../common/file-lock";
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";
import { isStorageFull } from "../../common/storage";

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

  /** Entries written to Redis (or nowhere) but not to the file yet: the file refused them. */
  const unwritten = new Map<string, FileEntry>();
  const live = (e: FileEntry | undefined) => (e && typeof e.session_id === "string" && e.expires_at > Date.now() ? e.session_id : undefined);

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
      return live(unwritten.get(convKey)) ?? live((await readMap())[convKey]);
    },
    async set(convKey, sessionId) {
      if (redis) {
        try {
          await redis.set(convKey, sessionId, { ttlSeconds: opts.ttlSeconds });
        } catch (err) {
          logger.warn(`session of ${convKey}: Redis failed (${(err as Error).message}); kept in ${file} only`);
        }
      }
      const now = Date.now();
      const entry: FileEntry = { session_id: sessionId, updated_at: new Date(now).toISOString(), expires_at: now + opts.ttlSeconds * 1000 };
      unwritten.delete(convKey);
      const held = [...unwritten];
      try {
        await mkdir(dirname(file), { recursive: true });
        await withFileLock(file, async () => {
          const map = await readMap();
          // Expired entries go whenever the file is written, so it does not grow without end.
          for (const [k, e] of Object.entries(map)) if (!(e?.expires_at > now)) delete map[k];
          for (const [k, e] of held) if (e.expires_at > now) map[k] = e;
          map[convKey] = entry;
          await writeFileAtomic(file, `${JSON.stringify(map, null, 2)}\n`);
        });
        for (const [k, e] of held) if (unwritten.get(k) === e) unwritten.delete(k);
      } catch (err) {
        if (!isStorageFull(err)) throw err;
        unwritten.set(convKey, entry);
        logger.warn(`session of ${convKey}: ${file} is on a full disk; held in memory until a write succeeds`);
      }
    },
  };
}
