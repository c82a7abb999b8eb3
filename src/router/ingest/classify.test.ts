import { describe, expect, it } from "bun:test";
import { classify, parseKind } from "./classify";

const c = (tags: string[], body = "text", frontmatter: Record<string, unknown> = {}) => classify({ tags, body, frontmatter });

describe("classify", () => {
  it("takes the frontmatter type first", () => {
    expect(c(["lesson"], "x", { type: "decision" })).toEqual({ kind: "decision", reason: "frontmatter" });
  });
  it("reads tags, with or without @ or #", () => {
    expect(c(["infra", "@lesson"]).kind).toBe("lesson");
    expect(c(["#adr"]).kind).toBe("decision");
    expect(c(["incident"]).kind).toBe("signal");
  });
  it("reads markers at the start of a line or in an HTML comment", () => {
    expect(c([], "We shipped it.\n@milestone v2 is out").kind).toBe("milestone");
    expect(c([], "<!-- @signal severity=high -->\nprod is down").kind).toBe("signal");
    expect(c([], "mail me at me@lesson.example").kind).toBe("note");
  });
  it("defaults to a note", () => {
    expect(c(["misc"], "just a note")).toEqual({ kind: "note", reason: "default" });
  });
  it("parses a model's one-word answer", () => {
    expect(parseKind(" Lesson.\n")).toBe("lesson");
    expect(parseKind("I think it is a lesson")).toBeUndefined();
  });
});
