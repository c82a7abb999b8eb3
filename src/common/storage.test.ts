import { describe, expect, it } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "./domain-error";
import { httpErrorOf } from "./http-error";
import { toolErrorOf } from "./mcp/tool-error";
import { isStorageFull, storageStatus } from "./storage";

const coded = (code: string) => Object.assign(new Error(code), { code });

describe("isStorageFull", () => {
  it("knows a full disk whichever store raised it: a file write, SQLite, Postgres, a quota", () => {
    for (const code of ["ENOSPC", "EDQUOT", "SQLITE_FULL", "53100"]) expect(isStorageFull(coded(code))).toBe(true);
  });

  it("finds it wrapped (cause, AggregateError) but not in other errors", () => {
    expect(isStorageFull(new Error("the batch failed", { cause: coded("ENOSPC") }))).toBe(true);
    expect(isStorageFull(new AggregateError([new Error("x"), coded("SQLITE_FULL")]))).toBe(true);
    for (const err of [coded("ENOENT"), coded("SQLITE_BUSY"), new Error("no space"), "ENOSPC", null]) expect(isStorageFull(err)).toBe(false);
  });
});

describe("a full disk at the edges", () => {
  it("is a 507 storage_full with Retry-After over HTTP, never a 500", () => {
    const http = httpErrorOf(coded("ENOSPC"));
    expect(http?.status).toBe(507);
    expect(http?.code).toBe("storage_full");
    expect(http?.headers?.["Retry-After"]).toBe("30");
    expect(httpErrorOf(new Error("a bug"))).toBeUndefined();
  });

  it("is a storage_full tool error over MCP", () => {
    const tool = toolErrorOf(coded("SQLITE_FULL"));
    if (!tool) throw new Error("no tool error for SQLITE_FULL");
    expect(tool.isError).toBe(true);
    expect((tool.content[0] as { text: string }).text).toStartWith("storage_full: ");
    expect(toolErrorOf(new DomainError("invalid", "bad", "bad"))).toBeDefined();
  });
});

describe("storageStatus", () => {
  it("reports each path's free space; a path that cannot be read is not called full", () => {
    const dir = mkdtempSync(join(tmpdir(), "storage-status-"));
    const [ok, missing] = storageStatus([
      { role: "DATA_DIR", path: dir },
      { role: "vault", path: join(dir, "no", "such") },
    ]);
    expect(ok).toMatchObject({ role: "DATA_DIR", path: dir });
    expect(ok!.free_bytes).toBeGreaterThan(0);
    expect(missing).toMatchObject({ role: "vault", free_bytes: null, full: false });
  });
});
