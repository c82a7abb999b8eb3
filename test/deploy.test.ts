// The deployment files: compose.yml is valid Compose (the compose-spec JSON schema that
// dclint ships) and keeps the spec's exposure rules; the Dockerfile is multi-stage, non-root
// and has a health check.
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import { parse } from "yaml";
import { REPO } from "./support/main-process";

type Service = { ports?: string[]; healthcheck?: unknown; profiles?: string[]; container_name?: string; volumes?: string[]; entrypoint?: unknown };
const compose = parse(readFileSync(join(REPO, "compose.yml"), "utf8"), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };

describe("compose.yml", () => {
  it("validates against the compose-spec JSON schema", () => {
    const schema = JSON.parse(readFileSync(join(REPO, "node_modules/dclint/schemas/compose.schema.json"), "utf8"));
    delete schema.$schema;
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const ok = validate(compose);
    if (!ok) throw new Error(ajv.errorsText(validate.errors));
    expect(ok).toBe(true);
  });

  it("has every service the issue names", () => {
    for (const s of ["brain-api", "mcp", "orchestrator", "postgres", "redis", "object-store", "embeddings", "inference", "tick-cron", "otel-collector"]) {
      expect(compose.services[s]).toBeDefined();
    }
    expect(compose.services["brain-api"]!.container_name).toBe("router_brain_api");
    expect(compose.services.inference!.profiles).toEqual(["ollama"]);
  });

  it("publishes 8103 and 8104 on ${BIND_HOST:-0.0.0.0} and everything else on 127.0.0.1 only", () => {
    expect(compose.services["brain-api"]!.ports).toEqual(["${BIND_HOST:-0.0.0.0}:${PORT_BRAIN_API:-8103}:8103"]);
    expect(compose.services.mcp!.ports).toEqual(["${BIND_HOST:-0.0.0.0}:${PORT_BRAIN_MCP:-8104}:8104"]);
    for (const [name, svc] of Object.entries(compose.services)) {
      if (name === "brain-api" || name === "mcp") continue;
      for (const port of svc.ports ?? []) expect(port).toStartWith("127.0.0.1:");
    }
  });

  it("gives every long-running service a health check and keeps data in named volumes", () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      if (name === "tick-cron") continue;
      expect(svc.healthcheck, name).toBeDefined();
    }
    const named = new Set(Object.keys(compose.volumes));
    for (const v of ["vault", "postgres-data", "redis-data", "object-data"]) expect(named.has(v)).toBe(true);
    expect(compose.services.postgres!.volumes).toContain("postgres-data:/var/lib/postgresql/data");
  });

  it("runs pgvector for Postgres", () => {
    expect((compose.services.postgres as { image?: string }).image).toStartWith("pgvector/pgvector");
  });
});

describe("Dockerfile", () => {
  const text = readFileSync(join(REPO, "Dockerfile"), "utf8");
  it("is multi-stage, runs as a non-root user and has a HEALTHCHECK", () => {
    expect(text.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(2);
    const user = /^USER (\S+)/m.exec(text)?.[1];
    expect(user).toBeDefined();
    expect(user).not.toBe("root");
    expect(text).toMatch(/^HEALTHCHECK /m);
    expect(text).toContain("bun install --frozen-lockfile");
  });
});
