import { describe, expect, it } from "bun:test";
import { MARK_CLOSE as C, markedSnippet, MARK_OPEN as O } from "./text.ts";

/** `count` words w0, w1, …, with the words at `marked` wrapped in highlight()'s marks. */
const words = (count: number, marked: Record<number, string> = {}) =>
  Array.from({ length: count }, (_, i) => (i in marked ? `${O}${marked[i]}${C}` : `w${i}`)).join(" ");

describe("markedSnippet", () => {
  it("keeps a short text whole, marks as <mark>", () => {
    expect(markedSnippet(`a ${O}b${C} c`)).toBe("a <mark>b</mark> c");
  });

  it("splits words at any white space and gives them back one space apart", () => {
    expect(markedSnippet(`x\u00a0${O}y${C}\u2003z\n\n\tq`)).toBe("x <mark>y</mark> z q");
  });

  it("cuts 24 words around a single match, centred, with … where text was cut", () => {
    const text = words(100, { 60: "deploy" });
    const expected = `…${Array.from({ length: 24 }, (_, k) => (49 + k === 60 ? "<mark>deploy</mark>" : `w${49 + k}`)).join(" ")}…`;
    expect(markedSnippet(text)).toBe(expected);
  });

  it("prefers the window with more distinct terms over one with more matches of one", () => {
    const snippet = markedSnippet(words(120, { 5: "deploy", 6: "deploy", 7: "deploy", 80: "canary", 82: "deploy" }));
    expect(snippet).toContain("<mark>canary</mark>");
    expect(snippet).not.toContain("w7 ");
  });

  it("centres a phrase mark spanning several words, keeping it whole", () => {
    const text = `${words(23)} ${O}w23 w24 w25 w26${C} ${Array.from({ length: 13 }, (_, i) => `w${27 + i}`).join(" ")}`;
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `w${from + i}`).join(" ");
    expect(markedSnippet(text)).toBe(`…${range(13, 22)} <mark>w23 w24 w25 w26</mark> ${range(27, 36)}…`);
  });

  it("counts a phrase as one term, whatever its case", () => {
    const left = markedSnippet(`${words(30)} ${O}Feature flag${C} ${words(30)}`);
    expect(left).toContain("<mark>Feature flag</mark>");
  });

  it("gives an empty snippet for empty text", () => {
    expect(markedSnippet("")).toBe("");
    expect(markedSnippet("   ")).toBe("");
  });
});
