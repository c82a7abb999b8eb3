// Model-written arc titles and summaries (when a chat model is configured and no_ai is off).
// Only listed (hot and warm) arcs are sent, at most MODEL_ARCS per tick; an arc the model
// cannot title keeps its rule-written title, and the tick records a warning instead of failing
// — signals must still be swept when the gateway is down.
import type { ChatEndpoint } from "../llm";
import { chat } from "../llm";
import { listedArcs } from "./arc-files";
import type { Arc } from "./arcs";

const MODEL_ARCS = 8;
const PROMPT_CHARS = 3000;

const SYSTEM =
  "You name threads of engineering work from the notes and markers in them. " +
  'Answer with JSON only: {"title": "<at most 8 words>", "summary": "<one sentence, at most 30 words>"}.';

export async function titleArcsWithModel(ep: ChatEndpoint, arcs: Arc[], warnings: string[]): Promise<Arc[]> {
  const chosen = new Set(
    listedArcs(arcs)
      .slice(0, MODEL_ARCS)
      .map((a) => a.id),
  );
  const out: Arc[] = [];
  for (const arc of arcs) {
    if (!chosen.has(arc.id)) {
      out.push(arc);
      continue;
    }
    const material = arc.items
      .slice(-20)
      .map((i) => `- @${i.kind} (${i.source}): ${i.text.replace(/\s+/g, " ").trim()}`)
      .join("\n")
      .slice(0, PROMPT_CHARS);
    try {
      const answer = await chat(
        ep,
        [
          { role: "system", content: SYSTEM },
          { role: "user", content: `Region: ${arc.region}\nItems:\n${material}` },
        ],
        { maxTokens: 120 },
      );
      const parsed = parseTitle(answer.text);
      if (!parsed) throw new Error(`the model's answer is not {"title","summary"} JSON: ${answer.text.slice(0, 120)}`);
      out.push({ ...arc, title: parsed.title, summary: parsed.summary, generator: "model" });
    } catch (err) {
      warnings.push(`arc ${arc.id} keeps its rule-written title: ${(err as Error).message}`);
      out.push(arc);
    }
  }
  return out;
}

function parseTitle(text: string): { title: string; summary: string } | undefined {
  const m = /\{[\s\S]*\}/.exec(text);
  if (!m) return undefined;
  try {
    const v = JSON.parse(m[0]) as { title?: unknown; summary?: unknown };
    const title = typeof v.title === "string" ? v.title.replace(/\s+/g, " ").trim().slice(0, 120) : "";
    const summary = typeof v.summary === "string" ? v.summary.replace(/\s+/g, " ").trim().slice(0, 400) : "";
    return title && summary ? { title, summary } : undefined;
  } catch {
    return undefined;
  }
}
