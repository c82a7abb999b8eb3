// The hook events `router-cli hook` answers, and the Claude Code event each one is for.
export const HOOK_EVENTS = ["session-start", "prompt", "stop"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export const CLAUDE_EVENT: Record<HookEvent, "SessionStart" | "UserPromptSubmit" | "Stop"> = {
  "session-start": "SessionStart",
  prompt: "UserPromptSubmit",
  stop: "Stop",
};
