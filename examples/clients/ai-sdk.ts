// The Vercel AI SDK with @ai-sdk/openai: its default model calls the Responses API.
import { createOpenAI } from "@ai-sdk/openai";
import { streamText, type ModelMessage } from "ai";

const openai = createOpenAI({ baseURL: `${process.env.SERVICE_URL ?? "http://127.0.0.1:8200"}/v1`, apiKey: process.env.SERVICE_API_KEY });
const model = openai(process.env.HUB_AGENT ?? "deploy-helper");

const messages: ModelMessage[] = [{ role: "user", content: "Why did the last deploy fail?" }];
const first = streamText({ model, messages });
for await (const text of first.textStream) process.stdout.write(text);
console.log(`\n[${(await first.usage).inputTokenDetails.cacheReadTokens} cached input tokens]`);

// Send the whole thread back: its earlier answers name the conversation, and the session resumes.
messages.push(...(await first.response).messages, { role: "user", content: "How do I fix it?" });
console.log(await streamText({ model, messages }).text);
