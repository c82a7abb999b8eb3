// Token usage as the OpenAI APIs report it, from the agent's result line (issue 15 part 5):
// prompt = input + cache creation + cache read; the cache reads also as
// prompt_tokens_details.cached_tokens (chat completions) or input_tokens_details.cached_tokens
// (Responses API), so clients that show cached tokens show the real figure.
import type { Usage } from "../agent/stream-json";

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

export const ZERO_USAGE: Readonly<ChatUsage> = Object.freeze({
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  prompt_tokens_details: Object.freeze({ cached_tokens: 0 }),
});

const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

export function chatUsage(u: Usage | undefined): ChatUsage {
  if (!u) return ZERO_USAGE;
  const cached = n(u.cache_read_input_tokens);
  const prompt = n(u.input_tokens) + n(u.cache_creation_input_tokens) + cached;
  const completion = n(u.output_tokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: cached } };
}

/** The Responses API's usage object. */
export function responsesUsage(u: ChatUsage) {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details.cached_tokens },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.total_tokens,
  };
}
