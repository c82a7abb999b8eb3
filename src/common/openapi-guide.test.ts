// The API guides (src/*/routes/api-guide.md) reach the served documents, and cannot drift from
// the routes: a section naming no operation fails the build of the document.
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { applyGuide } from "./openapi-app";

const doc = () => ({
  info: { description: "The API." },
  paths: { "/jobs": { post: { operationId: "createJob", description: "Submit a job." }, get: { operationId: "listJobs" } } },
});

describe("applyGuide", () => {
  it("appends the preamble to the document and each section to its operation", () => {
    const d = doc();
    applyGuide(
      d,
      "<!-- for editors -->\nGeneral words.\n\n## createJob\n\nBad input is 400.\n\n### Budgets\n\nA budget stops it.\n\n## listJobs\n\nNewest first.\n",
    );
    expect(d.info.description).toBe("The API.\n\nGeneral words.");
    expect(d.paths["/jobs"].post.description).toBe("Submit a job.\n\nBad input is 400.\n\n### Budgets\n\nA budget stops it.");
    expect(d.paths["/jobs"].get).toEqual({ operationId: "listJobs", description: "Newest first." } as never);
  });

  it("refuses a section that names no operation", () => {
    expect(() => applyGuide(doc(), "## creatJob\n\ntypo\n")).toThrow(/creatJob.*names no operation/);
  });

  it("leaves no section of the checked-in documents' guides out", () => {
    for (const [guide, document] of [
      ["src/router/routes/api-guide.md", "openapi/router.json"],
      ["src/orchestrator/routes/api-guide.md", "openapi/service.json"],
    ]) {
      const root = join(import.meta.dir, "..", "..");
      const text = readFileSync(join(root, guide as string), "utf8");
      const json = JSON.parse(readFileSync(join(root, document as string), "utf8")) as {
        paths: Record<string, Record<string, { operationId: string; description?: string }>>;
      };
      const ops = Object.values(json.paths).flatMap((item) => Object.values(item));
      for (const [, id, firstLine] of text.matchAll(/^## (\S+)\n\n(.+)$/gm)) {
        expect(ops.find((op) => op.operationId === id)?.description).toContain(firstLine ?? "");
      }
    }
  });
});
