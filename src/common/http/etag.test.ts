import { describe, expect, it } from "bun:test";
import { etagMatches, etagOf } from "./etag";

describe("etagMatches (If-None-Match)", () => {
  const hash = "3f2a9c0d";

  it("matches the quoted hash, weak or strong, anywhere in a list, and *", () => {
    expect(etagMatches(etagOf(hash), hash)).toBe(true);
    expect(etagMatches(`W/${etagOf(hash)}`, hash)).toBe(true);
    expect(etagMatches(`"old", ${etagOf(hash)}`, hash)).toBe(true);
    expect(etagMatches("*", hash)).toBe(true);
    expect(etagMatches(hash, hash)).toBe(true);
  });

  it("does not match another hash or no header", () => {
    expect(etagMatches(etagOf("0000"), hash)).toBe(false);
    expect(etagMatches(`"${hash}0"`, hash)).toBe(false);
    expect(etagMatches(undefined, hash)).toBe(false);
    expect(etagMatches("", hash)).toBe(false);
  });
});
