// Domain code fails with DomainError and knows no HTTP: only the edges (route files, and the
// shared HTTP and MCP layers in src/common) name statuses. This keeps it so as the code grows.
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";

const ROOT = join(import.meta.dir, "..");

function domainFiles(): string[] {
  const files: string[] = [];
  for (const dir of ["src/router", "src/orchestrator"]) {
    for (const path of new Glob("**/*.ts").scanSync(join(ROOT, dir))) {
      if (path.endsWith(".test.ts") || path.startsWith("routes/")) continue;
      files.push(`${dir}/${path}`);
    }
  }
  return files;
}

describe("domain errors", () => {
  it("finds the domain modules it checks", () => {
    expect(domainFiles()).toContain("src/router/llm.ts");
    expect(domainFiles()).toContain("src/router/markers/marker.ts");
    expect(domainFiles()).toContain("src/orchestrator/jobs/service.ts");
  });

  it("no domain module of either service throws or names an HttpError", () => {
    const offenders = domainFiles().filter((f) => /\bHttpError\b/.test(readFileSync(join(ROOT, f), "utf8")));
    expect(offenders).toEqual([]);
  });
});
