// The agent CLI's command line: `claude -p <prompt> --output-format stream-json --verbose …`.
// Kept apart from spawning so jobs and the chat stream build theirs the same way.

export interface AgentArgs {
  prompt: string;
  model?: string;
  maxTurns?: number;
  permissionMode?: string;
  /** A new session with this id (a UUID). */
  sessionId?: string;
  /** Continue this session instead (wins over sessionId). */
  resume?: string;
  /** Raw Messages-API stream events as `stream_event` lines (the chat stream needs them). */
  includePartialMessages?: boolean;
  appendSystemPrompt?: string;
  /** Replaces the default system prompt. */
  systemPrompt?: string;
  allowedTools?: string[];
  /** --max-budget-usd: the CLI stops with subtype error_max_budget_usd once the session cost reaches it. */
  maxBudgetUsd?: number;
  /** Appended as-is, before nothing else. */
  extraArgs?: string[];
}

export interface AgentCommand {
  argv: string[];
  /** The prompt goes on stdin instead of argv when it could be misread as a flag or is too long for one argument. */
  stdin?: string;
}

// Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN); stay well below.
const MAX_PROMPT_ARG_BYTES = 100 * 1024;

export function buildAgentArgv(a: AgentArgs): AgentCommand {
  const viaStdin = a.prompt.startsWith("-") || Buffer.byteLength(a.prompt) > MAX_PROMPT_ARG_BYTES;
  const argv = viaStdin ? ["-p"] : ["-p", a.prompt];
  argv.push("--output-format", "stream-json", "--verbose");
  if (a.includePartialMessages) argv.push("--include-partial-messages");
  if (a.model) argv.push("--model", a.model);
  if (a.maxTurns !== undefined) argv.push("--max-turns", String(a.maxTurns));
  if (a.permissionMode) argv.push("--permission-mode", a.permissionMode);
  if (a.resume) argv.push("--resume", a.resume);
  else if (a.sessionId) argv.push("--session-id", a.sessionId);
  if (a.systemPrompt) argv.push("--system-prompt", a.systemPrompt);
  if (a.appendSystemPrompt) argv.push("--append-system-prompt", a.appendSystemPrompt);
  // One comma-separated value: the flag is variadic and would swallow a following positional.
  if (a.allowedTools && a.allowedTools.length > 0) argv.push("--allowedTools", a.allowedTools.join(","));
  if (a.maxBudgetUsd !== undefined) argv.push("--max-budget-usd", String(a.maxBudgetUsd));
  if (a.extraArgs) argv.push(...a.extraArgs);
  return viaStdin ? { argv, stdin: a.prompt } : { argv };
}
