// The checked-in API documents: current with the code, valid OpenAPI 3.1, and served live.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compileErrors, validate } from "@readme/openapi-parser";
import { buildDocuments } from "../scripts/openapi-documents";
import { type MainProcess, REPO, startMain } from "./support/main-process";

const built = await buildDocuments();
const files = Object.keys(built);

describe("openapi/*.json", () => {
  for (const file of files) {
    it(`${file} is what bun run openapi generates (not stale)`, () => {
      const checkedIn = JSON.parse(readFileSync(join(REPO, "openapi", file), "utf8"));
      // Round-trip through JSON so undefined members compare as the file stores them.
      expect(checkedIn).toEqual(JSON.parse(JSON.stringify(built[file])));
    });

    it(`${file} validates as OpenAPI 3.1`, async () => {
      const doc = JSON.parse(readFileSync(join(REPO, "openapi", file), "utf8"));
      expect(doc.openapi).toBe("3.1.0");
      const result = await validate(doc);
      if (!result.valid) throw new Error(compileErrors(result));
      expect(result.specification).toBe("OpenAPI");
    });

    it(`${file} declares the bearer security scheme`, () => {
      const doc = built[file] as { components: { securitySchemes: Record<string, { type: string; scheme: string }> } };
      expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    });
  }
});

describe("served documents", () => {
  let main: MainProcess;
  beforeAll(async () => {
    main = await startMain([], { KB_ROUTER_TOKEN: "t" });
  });
  afterAll(() => main.stop());

  it("GET /openapi.json on each service matches the checked-in file", async () => {
    for (const [url, file] of [
      [main.routerUrl, "router.json"],
      [main.orchestratorUrl, "service.json"],
    ] as const) {
      const served = await (await fetch(`${url}/openapi.json`)).json();
      expect(served).toEqual(JSON.parse(readFileSync(join(REPO, "openapi", file), "utf8")));
    }
  });

  it("GET /docs serves an API reference page pointing at /openapi.json", async () => {
    for (const url of [main.routerUrl, main.orchestratorUrl]) {
      const html = await (await fetch(`${url}/docs`)).text();
      expect(html).toContain("/openapi.json");
    }
  });
});
