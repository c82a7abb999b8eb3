// The official OpenAI SDK, Responses API: previous_response_id continues the conversation.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.env.SERVICE_URL ?? "http://127.0.0.1:8200"}/v1`, apiKey: process.env.SERVICE_API_KEY });
const model = process.env.HUB_AGENT ?? "deploy-helper";

const first = await client.responses.create({ model, instructions: "Be brief.", input: "Why did the last deploy fail?" });
console.log(first.output_text);
console.log(`[${first.usage?.input_tokens} input tokens, ${first.usage?.input_tokens_details.cached_tokens} cached]`);

const stream = client.responses.stream({ model, previous_response_id: first.id, input: "How do I fix it?" });
stream.on("response.output_text.delta", (event) => process.stdout.write(event.delta));
await stream.finalResponse();
console.log();
