// The official OpenAI SDK, chat completions: one X-Conversation-Id per thread, reused every turn.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.env.SERVICE_URL ?? "http://127.0.0.1:8200"}/v1`, apiKey: process.env.SERVICE_API_KEY });
const model = process.env.HUB_AGENT ?? "deploy-helper";
const thread = { headers: { "X-Conversation-Id": crypto.randomUUID() } };

const stream = await client.chat.completions.create(
  { model, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "Why did the last deploy fail?" }] },
  thread,
);
for await (const chunk of stream) {
  process.stdout.write(chunk.choices[0]?.delta.content ?? "");
  if (chunk.usage) console.log(`\n[${chunk.usage.prompt_tokens} prompt tokens, ${chunk.usage.prompt_tokens_details?.cached_tokens} cached]`);
}

// The next turn of the same thread resumes the agent's session.
const next = await client.chat.completions.create({ model, messages: [{ role: "user", content: "How do I fix it?" }] }, thread);
console.log(next.choices[0]?.message.content);
