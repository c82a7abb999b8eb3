import { describe, expect, it } from "bun:test";
import { extractLinks, noteName, resolveLink } from "./links.ts";

const targets = (path: string, body: string) => extractLinks(path, body).map((l) => `${l.kind}:${l.target}`);

describe("extractLinks", () => {
  it("reads wikilinks by name, dropping #heading, |alias and the extension, case-folded", () => {
    expect(targets("raw/a.md", "See [[Deploy]], [[deploy#Rollback|how to roll back]], [[runbooks/Postgres.md]] and ![[diagram]].")).toEqual([
      "wiki:deploy",
      "wiki:runbooks/postgres",
      "wiki:diagram",
    ]);
  });

  it("resolves relative markdown links against the note's folder, and drops urls, anchors and escapes", () => {
    const body =
      "[a](../runbooks/deploy.md) [b](<sub dir/x%20y.md>) [c](https://example.com/x.md) [d](#top) [e](../../../../etc/passwd.md) [f](notes) [g](img.png) [h](/raw/top.md#s)";
    expect(targets("raw/notes/today.md", body)).toEqual([
      "path:raw/runbooks/deploy.md",
      "path:raw/notes/sub dir/x y.md",
      "path:raw/notes/notes.md",
      "path:raw/top.md",
    ]);
  });

  it("ignores links inside code", () => {
    expect(targets("raw/a.md", "```\n[[inside]]\n```\nand `[[inline]]` but [[outside]]")).toEqual(["wiki:outside"]);
  });

  it("keeps each link once", () => {
    expect(targets("raw/a.md", "[[x]] [[X]] [[x|again]]")).toEqual(["wiki:x"]);
  });
});

describe("resolveLink", () => {
  const notes = [{ path: "raw/deploy.md" }, { path: "raw/old/deploy.md" }, { path: "ingest/2026/deploy.md" }];
  it("takes the shortest path of that name, and a folder narrows it", () => {
    expect(resolveLink({ kind: "wiki", target: "deploy" }, notes)?.path).toBe("raw/deploy.md");
    expect(resolveLink({ kind: "wiki", target: "old/deploy" }, notes)?.path).toBe("raw/old/deploy.md");
    expect(resolveLink({ kind: "wiki", target: "new/deploy" }, notes)).toBeUndefined();
  });
  it("takes a path link's exact path only", () => {
    expect(resolveLink({ kind: "path", target: "raw/old/deploy.md" }, notes)?.path).toBe("raw/old/deploy.md");
    expect(resolveLink({ kind: "path", target: "raw/new/deploy.md" }, notes)).toBeUndefined();
  });
  it("names a note by its file name", () => {
    expect(noteName("raw/Runbooks/Deploy Steps.md")).toBe("deploy steps");
  });
});
