// LangChain's ChatOpenAI (chat completions): usage arrives once, with the cache reads.
import { HumanMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";

const chat = new ChatOpenAI({
  model: process.env.HUB_AGENT ?? "deploy-helper",
  apiKey: process.env.SERVICE_API_KEY,
  configuration: { baseURL: `${process.env.SERVICE_URL ?? "http://127.0.0.1:8200"}/v1`, defaultHeaders: { "X-Conversation-Id": crypto.randomUUID() } },
});

for await (const chunk of await chat.stream([new HumanMessage("Why did the last deploy fail?")])) {
  process.stdout.write(chunk.text);
  if (chunk.usage_metadata) console.log(`\n[${chunk.usage_metadata.input_tokens} input tokens, ${chunk.usage_metadata.input_token_details?.cache_read} cached]`);
}
