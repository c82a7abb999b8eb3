// The canonical events of one agent turn, independent of how a client sees them: the OpenAI
// chunk renderer (openai-chunks.ts) and the team-chat connector render the same stream their
// own way (spec: Events, "SSE chunks" and "Team-chat rendering").
import type { ApiRetry } from "../agent/api-retry";
import type { ChatUsage } from "./usage";

/** Set on events of a sub-agent (Task tool): the id of the tool call that started it; null on the main thread. */
export type ParentToolUseId = string | null;

export type TurnEvent =
  /** One thinking delta, as it arrives. */
  | { type: "thinking"; text: string; parentToolUseId: ParentToolUseId }
  /** A tool call, once its input JSON is complete (input is the parsed value, or the raw text when it does not parse). */
  | { type: "tool_call"; id: string; name: string; input: unknown; parentToolUseId: ParentToolUseId }
  | { type: "tool_result"; toolUseId: string; content: string; isError: boolean; parentToolUseId: ParentToolUseId }
  /**
   * Live text (issue 15 part 4; only when the turn runs with live text): a main-thread text delta
   * as it arrives; `blockStart` on the first delta of a text block. The block still closes as
   * narration or final afterwards, for the surfaces that buffer.
   */
  | { type: "text_delta"; text: string; blockStart: boolean }
  /** A closed text block that is not the last of the turn (or any text block of a sub-agent). */
  | { type: "narration"; text: string; parentToolUseId: ParentToolUseId }
  /**
   * The last closed text block of the main thread, at the end of a successful turn; exactly one
   * per turn, none when it ends on a tool call. `legacy`: no text block was streamed and this is
   * the result line's text (an agent run without partial messages).
   */
  | { type: "final"; text: string; legacy?: boolean }
  /** The agent retries the model API (its api_retry line): the turn is not stuck, it waits. */
  | { type: "status"; code: "api_retry"; message: string; retry: ApiRetry }
  /** The turn failed, or the agent reported an API error; code is machine-readable (authentication_failed, error_max_turns, agent_exit, …). */
  | { type: "error"; code: string; message: string }
  /** Last event of every turn. */
  | { type: "usage"; usage: ChatUsage; costUsd?: number; sessionId?: string; numTurns?: number };

export type TurnEventType = TurnEvent["type"];
