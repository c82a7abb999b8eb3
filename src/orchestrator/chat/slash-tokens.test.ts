import { describe, expect, it } from "bun:test";
import { applySlashTokens, parseSlashTokens } from "./slash-tokens";
import { DEFAULT_VISIBILITY } from "./visibility";

describe("parseSlashTokens", () => {
  it("finds tokens anywhere and strips them, tidying the spaces they leave", () => {
    expect(parseSlashTokens("/show-tools why does\n/show-thinking the build fail? /hide-final")).toEqual({
      tokens: ["/show-tools", "/show-thinking", "/hide-final"],
      text: "why does\nthe build fail?",
    });
  });

  it("leaves paths, unknown slash words and glued tokens alone", () => {
    const text = "see /usr/bin/env, /deploy now, /show-tools/x, a/show-all and /show-toolsy";
    expect(parseSlashTokens(text)).toEqual({ tokens: [], text });
  });

  it("a message of tokens only leaves no text", () => {
    expect(parseSlashTokens("  /show-all\n/stream-status ")).toEqual({ tokens: ["/show-all", "/stream-status"], text: "" });
  });
});

describe("applySlashTokens", () => {
  it("applies the tokens in order, a later one winning", () => {
    expect(applySlashTokens(DEFAULT_VISIBILITY, ["/show-all", "/hide-tools"])).toEqual({
      show_thinking: true,
      show_tools: false,
      show_text: true,
      show_narration: true,
      show_final: true,
      live_text: false,
    });
  });

  it("/hide-all leaves the final answer only", () => {
    expect(applySlashTokens({ ...DEFAULT_VISIBILITY, show_tools: true, show_thinking: true }, ["/hide-all"])).toEqual({
      show_thinking: false,
      show_tools: false,
      show_text: true,
      show_narration: false,
      show_final: true,
      live_text: false,
    });
  });

  it("/live-text and /block-text switch how text is streamed, and the other toggles leave it alone", () => {
    const live = applySlashTokens(DEFAULT_VISIBILITY, ["/live-text", "/hide-all"]);
    expect(live).toEqual({ ...DEFAULT_VISIBILITY, show_narration: false, live_text: true });
    expect(applySlashTokens(live, ["/show-all", "/block-text"]).live_text).toBe(false);
    expect(parseSlashTokens("/live-text why?")).toEqual({ tokens: ["/live-text"], text: "why?" });
  });

  it("/stream-status changes nothing", () => {
    expect(applySlashTokens(DEFAULT_VISIBILITY, ["/stream-status"])).toEqual({ ...DEFAULT_VISIBILITY });
  });
});
