import { describe, expect, it } from "bun:test";
import { HOSTILE_QUERIES } from "../../../test/fixtures/index-corpus.ts";
import { httpErrorOf } from "../../common/http-error.ts";
import { QueryError } from "./errors.ts";
import { clauses, MAX_QUERY_WORDS, parseQuery } from "./query.ts";

describe("parseQuery", () => {
  it("splits loose words", () => {
    expect(parseQuery("postgres vacuum")).toEqual({ terms: ["postgres", "vacuum"], phrases: [], tags: [], producers: [] });
  });

  it("reads quoted phrases as word lists", () => {
    const q = parseQuery('deploy "rolling restart" today');
    expect(q.terms).toEqual(["deploy", "today"]);
    expect(q.phrases).toEqual([["rolling", "restart"]]);
  });

  it("takes a one-word phrase as a word", () => {
    expect(parseQuery('"postgres"').terms).toEqual(["postgres"]);
  });

  it("reads tag: and producer: filters, quoted or bare", () => {
    const q = parseQuery('tag:Ops tag:"on call" producer:lessons producer:RAW outage');
    expect(q.tags).toEqual(["ops", "on call"]);
    expect(q.producers).toEqual(["lessons", "raw"]);
    expect(q.terms).toEqual(["outage"]);
  });

  it("refuses an unknown producer with a 400-shaped error naming the allowed ones", () => {
    let err: unknown;
    try {
      parseQuery("producer:wiki x");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(QueryError);
    expect(httpErrorOf(err)?.status).toBe(400);
    expect((err as QueryError).code).toBe("invalid_query");
    expect((err as QueryError).message).toContain("raw, ingest, lessons, arcs, signals, feed, markers");
  });

  it("drops stop words from loose words unless nothing else is left", () => {
    expect(parseQuery("how to configure the router").terms).toEqual(["configure", "router"]);
    expect(parseQuery("the").terms).toEqual(["the"]);
  });

  it("keeps stop words inside phrases", () => {
    expect(parseQuery('"state of the art"').phrases).toEqual([["state", "of", "the", "art"]]);
  });

  it("treats operators and punctuation as separators, never as syntax", () => {
    expect(parseQuery("NEAR(a b) AND -c*").terms).toEqual(["near", "b", "c"]);
    expect(parseQuery("foo-bar v1.2").terms).toEqual(["foo", "bar", "v1", "2"]);
  });

  it("keeps unicode words", () => {
    expect(parseQuery("café 日本語 e\u0301").terms).toEqual(["café", "日本語", "é"]);
  });

  it("bounds the number and length of words", () => {
    expect(clauses(parseQuery("w".repeat(101))).length).toBe(0);
    const many = Array.from({ length: 50 }, (_, i) => `word${i}`).join(" ");
    expect(parseQuery(many).terms.length).toBe(MAX_QUERY_WORDS);
  });

  it("parses every hostile input without throwing, into words only", () => {
    for (const input of HOSTILE_QUERIES) {
      const q = parseQuery(input);
      for (const words of clauses(q)) for (const w of words) expect(w).toMatch(/^[\p{L}\p{N}][\p{L}\p{N}\p{M}]*$/u);
    }
  });
});
