// The model's second opinion on a rule-less "note" (classify.ts): asked for exactly one kind,
// read back with parseKind, so a chatty or unknown answer keeps the rules' "note".
import { type ChatEndpoint, chat } from "../llm";
import { KINDS, type Kind, parseKind } from "./classify";

/** Content past this many characters is not shown to the model: the start says what a note is. */
const REFINE_CHARS = 4000;

/** The refine step ingest calls when a chat model is configured. */
export function modelRefine(ep: ChatEndpoint): (content: string) => Promise<Kind | undefined> {
  return async (content) => {
    const answer = await chat(
      ep,
      [
        { role: "system", content: `Classify the note as exactly one word from: ${KINDS.join(", ")}. Answer with that word only.` },
        { role: "user", content: content.slice(0, REFINE_CHARS) },
      ],
      { maxTokens: 3 },
    );
    return parseKind(answer.text);
  };
}
