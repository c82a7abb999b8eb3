import { describe, expect, it } from "bun:test";
import { MARK_CLOSE as C, markedSnippet, markPositions, MARK_OPEN as O, wordsMaybeSplit } from "./snippet.ts";

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

describe("markPositions", () => {
  it("counts words as runs of letters, digits and marks, whatever the script, and marks those at the positions", () => {
    const text = "Café déjà-vu: 東京 and 𝒳ray, v1.2 deploy";
    // Words: Café(1) déjà(2) vu(3) 東京(4) and(5) 𝒳ray(6) v1(7) 2(8) deploy(9)
    expect(markPositions(text, [2, 4, 6, 9])).toBe(`Café ${O}déjà${C}-vu: ${O}東京${C} and ${O}𝒳ray${C}, v1.2 ${O}deploy${C}`);
    expect(markPositions(text, [])).toBe(text);
  });

  it("gives a word the parser splits as many positions as the lexicon says", () => {
    const tokens = (w: string) => (w === "9e9the" ? 2 : undefined);
    expect(markPositions("after 9e9the canary", [4], tokens)).toBe(`after 9e9the ${O}canary${C}`);
    expect(markPositions("after 9e9the canary", [3], tokens)).toBe(`after ${O}9e9the${C} canary`);
    expect(wordsMaybeSplit("after 9e9the a1b2 007 12e canary")).toEqual(["9e9the", "12e"]);
  });
});
