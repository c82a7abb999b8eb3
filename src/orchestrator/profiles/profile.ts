// A profile: which model a job runs with, how many turns, what the agent may do, how long it
// may take, and whether a pull request is opened. spec: Profile (bundled code and review).
import { z } from "zod";

const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** Lower-case letters, digits, '-' and '_'; "auto" is reserved for automatic selection. */
export const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const AUTO = "auto";

export type ProfileSource = "bundled" | "hooks" | "shared" | "user";

export interface Profile {
  name: string;
  description: string;
  /** Passed as --model (an alias like sonnet, or a full model id). */
  model: string;
  max_turns: number;
  /** Push the branch and open a pull request when the job succeeds (repository jobs only). */
  auto_pr: boolean;
  /** Passed as --permission-mode. */
  permission_mode: PermissionMode;
  /** Kills the agent after this long; unset = SERVICE_CLAUDE_TIMEOUT. */
  timeout_seconds?: number;
  /** With REDIS_URL: times a job whose pod died while it ran is queued again (default 0: failed, never re-run). */
  retries?: number;
  /** Appended to the agent's system prompt (with the profile directory's CLAUDE.md, if any). */
  append_system_prompt?: string;
  /** Passed as --allowedTools (e.g. "Read", "Bash(git diff:*)"). */
  allowed_tools?: string[];
  /** Passed as --max-budget-usd: the agent stops (error_max_budget_usd) once it has spent this much. */
  max_budget_usd?: number;
  source: ProfileSource;
  /** The profile's directory (not for bundled profiles). */
  dir?: string;
}

/** The profile.yml file. Unknown keys are ignored (hooks packages may carry their own). */
export const ProfileFile = z.object({
  name: z.string().regex(PROFILE_NAME, "lower-case letters, digits, - and _ only").optional(),
  description: z.string().default(""),
  model: z.string().min(1),
  max_turns: z.number().int().min(1).max(10_000),
  auto_pr: z.boolean().default(false),
  permission_mode: z.enum(PERMISSION_MODES).default("default"),
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 86400)
    .optional(),
  retries: z.number().int().min(0).max(10).optional(),
  append_system_prompt: z.string().optional(),
  allowed_tools: z.array(z.string().min(1)).optional(),
  max_budget_usd: z.number().positive().max(100_000).optional(),
});

export const BUNDLED_PROFILES: readonly Profile[] = [
  {
    name: "code",
    description: "Changes code in the repository and opens a pull request",
    model: "sonnet",
    max_turns: 80,
    auto_pr: true,
    // A job has no one to answer permission prompts: the agent works unattended in its own worktree.
    permission_mode: "bypassPermissions",
    source: "bundled",
  },
  {
    name: "review",
    description: "Reads the repository and reports; changes nothing",
    model: "haiku",
    max_turns: 20,
    auto_pr: false,
    // Anything outside the allowed tools is denied (there is no one to ask).
    permission_mode: "default",
    allowed_tools: ["Read", "Grep", "Glob", "Bash(git log:*)", "Bash(git diff:*)", "Bash(git show:*)", "Bash(git status:*)"],
    source: "bundled",
  },
];
