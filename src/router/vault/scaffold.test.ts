import { describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCHEMA_FILE, VAULT_FOLDERS } from "./layout";
import { scaffold } from "./scaffold";

const vault = () => join(mkdtempSync(join(tmpdir(), "vault-")), "v");

describe("scaffold", () => {
  it("creates every folder of the layout and the schema file", async () => {
    const v = vault();
    const r = await scaffold(v);
    expect(r.schemaWritten).toBe(true);
    for (const { path } of VAULT_FOLDERS) expect(readdirSync(join(v, path))).toBeArray();
    expect(JSON.parse(readFileSync(join(v, SCHEMA_FILE), "utf8"))).toMatchObject({ schema: "brain-vault", version: 1 });
  });

  it("is idempotent: a second run creates and writes nothing", async () => {
    const v = vault();
    await scaffold(v);
    expect(await scaffold(v)).toEqual({ created: [], schemaWritten: false });
  });

  it("repairs a damaged schema and missing folders without touching a user's files", async () => {
    const v = vault();
    await scaffold(v);
    writeFileSync(join(v, SCHEMA_FILE), "garbage");
    writeFileSync(join(v, "raw", "note.md"), "# mine\n");
    mkdirSync(join(v, "left", "reference", "sub"), { recursive: true });
    writeFileSync(join(v, "hot-arcs.md"), "user edited\n");
    const r = await scaffold(v);
    expect(r.schemaWritten).toBe(true);
    expect(readFileSync(join(v, "raw", "note.md"), "utf8")).toBe("# mine\n");
    expect(readFileSync(join(v, "hot-arcs.md"), "utf8")).toBe("user edited\n");
    expect(readdirSync(v).filter((f) => f.includes(".tmp"))).toEqual([]);
  });
});
