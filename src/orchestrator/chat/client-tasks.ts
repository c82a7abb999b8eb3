// Chat clients' background tasks (issue 15 part 2). Open WebUI asks the chat's model for a
// title, tags, follow-up suggestions, search/retrieval queries and autocompletions; with header
// forwarding on, those requests carry the chat's id and would resume the user's agent session
// (and get 429 while a turn runs). They are recognised here and answered as a one-shot turn: no
// tools, no session, the cheap model, never the conversation's busy lock.
//
// How they look: one user message holding a prompt built from a template that begins with
// `### Task:` (Open WebUI's defaults for title, tags, follow-ups, queries, autocomplete, emoji and
// image prompts all do), the chat history embedded in it; Open WebUI's own request marker,
// `metadata.task` (e.g. "title_generation"), is stripped by its OpenAI connector but kept by
// pipelines and direct callers, so it counts too.
import { type ChatMessage, messageText } from "./messages";

const TASK_PREFIX = "### Task:";

/** The system prompt of a task turn (replaces the agent's: a task is not the agent talking). */
export const TASK_SYSTEM_PROMPT =
  "You complete small background tasks for a chat application (titles, tags, follow-up questions, search queries, " +
  "autocompletion). Follow the task's instructions and output format exactly and output nothing else.";

const MARKER = /^[a-z][a-z0-9_]{0,63}$/;

/** The task's name (metadata.task, or "task" for a `### Task:` prompt), or undefined for a chat turn. */
export function clientTask(messages: readonly ChatMessage[], metadata: Record<string, unknown> | null | undefined): string | undefined {
  const marker = metadata?.task;
  if (typeof marker === "string" && MARKER.test(marker)) return marker;
  const last = messages[messages.length - 1];
  if (last?.role !== "user") return undefined;
  return messageText(last.content).trimStart().startsWith(TASK_PREFIX) ? "task" : undefined;
}
