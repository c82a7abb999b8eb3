// Slash tokens in the last user message (spec: Events, "Slash tokens"): anywhere in the text,
// as whole words (whitespace or the text's edge on both sides, so /usr/bin, /show-tools/x or
// a/show-all are not tokens), applied in order, stripped before the agent sees the prompt.
// Unknown slash words are left alone.
import type { Visibility } from "./visibility";

const SLASH_TOKENS = [
  "/show-thinking",
  "/hide-thinking",
  "/show-tools",
  "/hide-tools",
  "/show-narration",
  "/hide-narration",
  "/show-final",
  "/hide-final",
  "/show-all",
  "/hide-all",
  "/stream-status",
  "/live-text",
  "/block-text",
] as const;
export type SlashToken = (typeof SLASH_TOKENS)[number];

const TOKEN_RE = new RegExp(`(^|\\s)(${SLASH_TOKENS.map((t) => t.replace("/", "\\/")).join("|")})(?=\\s|$)`, "g");

export interface ParsedTokens {
  tokens: SlashToken[];
  /** The text without the tokens (whitespace they leave tidied, the rest untouched). */
  text: string;
}

export function parseSlashTokens(text: string): ParsedTokens {
  const tokens: SlashToken[] = [];
  if (!text.includes("/")) return { tokens, text };
  const stripped = text.replace(TOKEN_RE, (_m, lead: string, token: SlashToken) => {
    tokens.push(token);
    return lead;
  });
  if (tokens.length === 0) return { tokens, text };
  // Tidy only around where tokens were: runs of spaces on one line, and the ends.
  return {
    tokens,
    text: stripped
      .replace(/[ \t]{2,}/g, " ")
      .replace(/[ \t]+\n/g, "\n")
      .replace(/\n[ \t]+/g, "\n")
      .trim(),
  };
}

/** The config after the toggles, in order (a later token wins over an earlier one). */
export function applySlashTokens(v: Visibility, tokens: readonly SlashToken[]): Visibility {
  const next = { ...v };
  for (const t of tokens) {
    switch (t) {
      case "/show-thinking":
        next.show_thinking = true;
        break;
      case "/hide-thinking":
        next.show_thinking = false;
        break;
      case "/show-tools":
        next.show_tools = true;
        break;
      case "/hide-tools":
        next.show_tools = false;
        break;
      case "/show-narration":
        next.show_narration = true;
        break;
      case "/hide-narration":
        next.show_narration = false;
        break;
      case "/show-final":
        next.show_final = true;
        break;
      case "/hide-final":
        next.show_final = false;
        break;
      case "/show-all":
        Object.assign(next, { show_thinking: true, show_tools: true, show_text: true, show_narration: true, show_final: true });
        break;
      case "/hide-all":
        // Final answer only.
        Object.assign(next, { show_thinking: false, show_tools: false, show_text: true, show_narration: false, show_final: true });
        break;
      case "/live-text":
        next.live_text = true;
        break;
      case "/block-text":
        next.live_text = false;
        break;
      case "/stream-status":
        break;
    }
  }
  return next;
}
