// The agent CLI: spawn it, read its stream-json events, know how the run ended. Used by jobs
// (execution/execute.ts) and by the chat stream, which maps the events to chunks itself.
export { buildAgentArgv, type AgentArgs } from "./argv";
export { buildAgentEnv, SERVICE_SECRET_VARS } from "./env";
export { toTokenUsage, type AgentOutcome, type TokenUsage } from "./outcome";
export { AgentSpawnError, DEFAULT_KILL_GRACE_MS, startAgent, type AgentRun, type StartAgentOptions } from "./process";
export { chooseSession, InvalidSessionIdError, validateSessionId } from "./session";
export { parseAgentLine, readLines, type AgentEvent } from "./stream-json";
