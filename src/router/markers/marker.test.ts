import { describe, expect, it } from "bun:test";
import { DomainError } from "../../common/domain-error";
import { markerId, markerKey, requireMarkerType } from "./marker";

describe("markerKey", () => {
  it("gives the same marker sent twice one key, whatever its whitespace", () => {
    const once = markerKey(undefined, JSON.parse('{"type":"lesson","content":"pin digests"}'));
    const again = markerKey(undefined, JSON.parse('{ "type": "lesson",\n  "content": "pin digests" }'));
    expect(again).toEqual(once);
    expect(once.source).toBe("body");
  });

  it("gives a different marker a different key", () => {
    const a = markerKey(undefined, { type: "lesson", content: "pin digests" });
    const b = markerKey(undefined, { type: "lesson", content: "pin tags" });
    expect(markerId(a.key)).not.toBe(markerId(b.key));
  });

  it("uses the client's key when it sent one, so different bodies under it are one marker", () => {
    const a = markerKey("k-1", { type: "lesson", content: "first" });
    const b = markerKey("k-1", { type: "signal", content: "second" });
    expect(a).toEqual(b);
    expect(a.source).toBe("header");
    expect(a).not.toEqual(markerKey("k-2", { type: "lesson", content: "first" }));
  });

  it("does not confuse a client's key with a body hash", () => {
    const body = { type: "lesson", content: "x" };
    const hashed = markerKey(undefined, body);
    expect(markerKey(hashed.key, body).key).not.toBe(hashed.key);
  });
});

describe("requireMarkerType", () => {
  it("takes a type with or without the @, in any case", () => {
    expect(requireMarkerType("@Lesson")).toBe("lesson");
    expect(requireMarkerType(" decision ")).toBe("decision");
  });

  it("refuses an unknown type as the caller's mistake, naming it", () => {
    const err = (() => {
      try {
        requireMarkerType("@todo");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ kind: "invalid", code: "invalid_request" });
    expect((err as Error).message).toContain('"@todo"');
  });
});
