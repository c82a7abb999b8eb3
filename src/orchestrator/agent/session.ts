// Which session a run uses. A new run gets a fresh UUID (--session-id), so its transcript's
// path is known even when the CLI dies before printing one. A session id the caller names is
// resumed (--resume) when its transcript exists anywhere under <claude dir>/projects/: the
// CLI looks sessions up by working directory and every job has its own worktree, so the
// transcript is copied next to the new one first. An unknown id starts a new session with it.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { copyFile, mkdir, readdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { DomainError } from "../../common/domain-error";
import type { OrchestratorConfig } from "../config";
import { claudeDir, transcriptPath } from "../telemetry/transcript";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class InvalidSessionIdError extends DomainError {
  constructor(id: string) {
    super("invalid", "invalid_session_id", `session_id ${JSON.stringify(id)} is not a UUID (the agent CLI accepts only UUIDs)`);
    this.name = "InvalidSessionIdError";
  }
}

export function validateSessionId(id: string): string {
  if (!UUID.test(id)) throw new InvalidSessionIdError(id);
  return id.toLowerCase();
}

export interface SessionChoice {
  sessionId: string;
  /** True: pass --resume; false: --session-id. */
  resume: boolean;
  /** Size of the transcript before this run (the part to skip when shipping). */
  transcriptOffset: number;
}

type Dirs = Pick<OrchestratorConfig, "claudeHomeDir" | "claudeConfigDir">;

export async function chooseSession(config: Dirs, cwd: string, requested?: string): Promise<SessionChoice> {
  if (!requested) return { sessionId: randomUUID(), resume: false, transcriptOffset: 0 };
  const id = validateSessionId(requested);
  const target = transcriptPath(config, cwd, id);
  if (!existsSync(target)) {
    const found = await findTranscript(config, id);
    if (!found) return { sessionId: id, resume: false, transcriptOffset: 0 };
    await mkdir(dirname(target), { recursive: true });
    await copyFile(found, target);
  }
  return { sessionId: id, resume: true, transcriptOffset: (await stat(target)).size };
}

async function findTranscript(config: Dirs, id: string): Promise<string | undefined> {
  const projects = join(claudeDir(config), "projects");
  const dirs = await readdir(projects).catch(() => [] as string[]);
  for (const d of dirs) {
    const p = join(projects, d, `${id}.jsonl`);
    if (existsSync(p)) return p;
  }
  return undefined;
}
