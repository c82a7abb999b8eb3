import { describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadRouterConfig } from "./config";

const homeWithEnv = (text?: string) => {
  const h = mkdtempSync(join(tmpdir(), "router-home-"));
  if (text !== undefined) {
    mkdirSync(join(h, ".router"));
    writeFileSync(join(h, ".router", ".env"), text);
  }
  return h;
};

describe("router configuration", () => {
  it("defaults: 127.0.0.1:8103, MCP 8104, ./vault, no token (fail closed)", () => {
    const c = loadRouterConfig({}, homeWithEnv());
    expect(c).toMatchObject({ host: "127.0.0.1", port: 8103, mcpPort: 8104, tokens: [], vault: resolve("./vault") });
  });

  it("takes the environment over ~/.router/.env over the default", () => {
    const h = homeWithEnv('PORT_BRAIN_API=9103\nKB_ROUTER_TOKEN="from-file"\nROUTER_HOST=0.0.0.0\n');
    const c = loadRouterConfig({ PORT_BRAIN_API: "9999" }, h);
    expect(c.port).toBe(9999);
    expect(c.host).toBe("0.0.0.0");
    expect(c.tokens).toEqual(["from-file"]);
  });

  it("joins KB_ROUTER_TOKEN and KB_ROUTER_TOKENS, trimmed and without duplicates", () => {
    const c = loadRouterConfig({ KB_ROUTER_TOKEN: "a", KB_ROUTER_TOKENS: "b, a ,,c" }, homeWithEnv());
    expect(c.tokens).toEqual(["a", "b", "c"]);
  });

  it("--vault wins over VAULT_PATH", () => {
    const c = loadRouterConfig({ VAULT_PATH: "/tmp/env-vault" }, homeWithEnv(), { vault: "/tmp/flag-vault" });
    expect(c.vault).toBe("/tmp/flag-vault");
  });

  it("rerank: off by default; RERANK_* read and checked", () => {
    const c = loadRouterConfig({}, homeWithEnv());
    expect(c).toMatchObject({ rerankUrl: undefined, rerankFormat: "documents", rerankLlm: false, rerankDepth: 40, rerankTimeoutMs: 2000 });
    const set = loadRouterConfig({ RERANK_URL: "http://tei:8080", RERANK_FORMAT: "texts", RERANK_DEPTH: "30", RERANK_TIMEOUT_MS: "500" }, homeWithEnv());
    expect(set).toMatchObject({ rerankUrl: "http://tei:8080", rerankFormat: "texts", rerankDepth: 30, rerankTimeoutMs: 500 });
    expect(() => loadRouterConfig({ RERANK_FORMAT: "xml" }, homeWithEnv())).toThrow(/RERANK_FORMAT.*documents, texts/);
    expect(() => loadRouterConfig({ RERANK_DEPTH: "1" }, homeWithEnv())).toThrow(/RERANK_DEPTH/);
    expect(() => loadRouterConfig({ RERANK_URL: "not a url" }, homeWithEnv())).toThrow(/RERANK_URL/);
  });
});
