// Chat visibility with every part of a turn shown, live text included: the setting under which
// a renderer has the most to get right (the chunk and response-event tests).
import { DEFAULT_VISIBILITY, type Visibility } from "../../src/orchestrator/chat/visibility";

export const EVERYTHING_SHOWN: Readonly<Visibility> = Object.freeze({
  ...DEFAULT_VISIBILITY,
  show_thinking: true,
  show_tools: true,
  show_text: true,
  show_narration: true,
  show_final: true,
  live_text: true,
});
