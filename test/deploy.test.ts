// The deployment files: compose.yml is valid Compose (the compose-spec JSON schema that
// dclint ships) and keeps the spec's exposure rules; the Dockerfile is multi-stage, non-root
// and has a health check.
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import { parse } from "yaml";
import { REPO } from "./support/main-process";

/**
 * Compose's interpolation of `${VAR:-default}` and `${VAR:+replacement}` (the compose spec's
 * rules: an unset or empty VAR takes the default, a set and non-empty one the replacement),
 * innermost first, as `docker compose config` resolves a value from the env file.
 */
function interpolate(text: string, env: Record<string, string>): string {
  let out = text;
  for (let last = ""; last !== out; ) {
    last = out;
    out = out.replace(/\$\{([A-Z_][A-Z0-9_]*)(:-|:\+)([^${}]*)\}/g, (_, name: string, op: string, word: string) => {
      const set = (env[name] ?? "") !== "";
      if (op === ":-") return set ? env[name]! : word;
      return set ? word : "";
    });
  }
  return out;
}

type Service = {
  command?: string[];
  ports?: string[];
  healthcheck?: unknown;
  profiles?: string[];
  container_name?: string;
  volumes?: string[];
  entrypoint?: unknown;
  restart?: string;
  environment?: Record<string, string>;
  depends_on?: Record<string, unknown>;
};
const compose = parse(readFileSync(join(REPO, "compose.yml"), "utf8"), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};

describe("compose.yml", () => {
  it("validates against the compose-spec JSON schema", () => {
    const schema = JSON.parse(readFileSync(join(REPO, "node_modules/dclint/schemas/compose.schema.json"), "utf8"));
    delete schema.$schema;
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const ok = validate(compose);
    if (!ok) throw new Error(ajv.errorsText(validate.errors));
    expect(ok).toBe(true);
    // The schema does reject what compose rejects.
    expect(validate({ services: { api: { image: "x", ports: "8103:8103" } } })).toBe(false);
    expect(validate({ services: { api: { image: "x", healthcheck: { interval: 15 } } } })).toBe(false);
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
      if (svc.restart === "no") continue; // one-shot jobs (object-store-init)
      expect(svc.healthcheck, name).toBeDefined();
    }
    const named = new Set(Object.keys(compose.volumes));
    for (const v of ["vault", "postgres-data", "redis-data", "object-data"]) expect(named.has(v)).toBe(true);
    expect(compose.services.postgres!.volumes).toContain("postgres-data:/var/lib/postgresql/data");
    // The orchestrator keeps its state, its clones, the agent's home and a `claude login` across a recreate.
    expect(compose.services.orchestrator!.volumes).toEqual(
      expect.arrayContaining(["service-state:/home/brain/.service", "service-repos:/home/brain/service-repos", "claude-login:/home/brain/.claude"]),
    );
    // Every named volume a service mounts is declared (so `down` keeps it).
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const v of svc.volumes ?? []) {
        const source = v.split(":")[0]!;
        if (/^[a-z][\w-]*$/.test(source)) expect(named.has(source), `${name}: ${v}`).toBe(true);
      }
    }
  });

  it("mounts the host vault router-cli install scaffolds (VAULT_PATH), else the named volume", () => {
    for (const s of ["brain-api", "mcp"]) expect(compose.services[s]!.volumes).toContain("${VAULT_PATH:-vault}:/vault");
  });

  it("takes DATABASE_URL and REDIS_URL from the env file when install was given --postgres-url / --redis-url", () => {
    expect(compose.services["brain-api"]!.environment!.DATABASE_URL).toStartWith("${DATABASE_URL:-postgres://brain:");
    expect(compose.services["brain-api"]!.environment!.REDIS_URL).toBe("${REDIS_URL:-redis://redis:6379}");
    expect(compose.services.orchestrator!.environment!.REDIS_URL).toBe("${REDIS_URL:-redis://redis:6379}");
  });

  it("creates the bundle bucket in the bundled object store once it is healthy", () => {
    const init = compose.services["object-store-init"]!;
    expect(init.depends_on).toEqual({ "object-store": { condition: "service_healthy" } });
    expect(JSON.stringify(init)).toContain("mc mb --ignore-existing");
    expect(init.environment!.S3_BUCKET).toBe(compose.services["brain-api"]!.environment!.S3_BUCKET!);
  });

  it("builds the brain image from the checkout (no registry needed for `docker compose up --build`)", () => {
    const raw = parse(readFileSync(join(REPO, "compose.yml"), "utf8"), { merge: false }) as Record<
      string,
      { image?: string; build?: { context?: string; dockerfile?: string } }
    >;
    expect(raw["x-brain-image"]!.image).toBe("${BRAIN_IMAGE:-brain-stack:local}");
    expect(raw["x-brain-image"]!.build).toEqual({ context: ".", dockerfile: "Dockerfile" });
    for (const s of ["brain-api", "mcp", "orchestrator", "tick-cron"]) expect((compose.services[s] as { build?: unknown }).build).toBeDefined();
  });

  it("dispatch works out of the box: what the router sends and what the orchestrator accepts are one setting", () => {
    expect(compose.services["brain-api"]!.environment!.SERVICE_API_KEY).toBe("${SERVICE_API_KEY:-}");
    expect(compose.services.orchestrator!.environment!.SERVICE_API_KEYS).toBe("${SERVICE_API_KEY:-}");
    expect(compose.services["brain-api"]!.environment!.ORCHESTRATOR_URL).toBe("http://orchestrator:8200");
  });

  it("with no settings, the router's token is generated into its data volume and tick-cron reads it there", () => {
    // The image's entrypoint (scripts/start.ts) writes $HOME/.router/.env when no token is set.
    for (const s of ["brain-api", "mcp", "tick-cron"]) {
      expect(compose.services[s]!.environment!.HOME).toBe("/data");
      expect(compose.services[s]!.volumes).toContain("router-data:/data");
    }
    expect(compose.services.orchestrator!.environment!.HOME).toBeUndefined();
  });

  it("exports the collector's traces to the tracing backend's OTLP endpoint when TRACING_BASIC_AUTH is set, else logs them only", () => {
    const collector = compose.services["otel-collector"]!;
    const configIn = (env: Record<string, string>) => {
      const arg = interpolate(collector.command!.join(" "), env);
      const path = /--config=(\S+)/.exec(arg)?.[1];
      const mount = collector.volumes!.find((v) => v.split(":")[1] === path);
      expect(mount).toBeDefined();
      const config = parse(readFileSync(join(REPO, mount!.split(":")[0]!), "utf8"));
      const environment = Object.fromEntries(Object.entries(collector.environment ?? {}).map(([k, v]) => [k, interpolate(v, env)]));
      return { config, environment };
    };

    // Nothing set: the debug log, and no exporter that could send anything anywhere.
    const plain = configIn({});
    expect(plain.config.service.pipelines.traces.exporters).toEqual(["debug"]);
    expect(Object.keys(plain.config.exporters)).toEqual(["debug"]);

    // TRACING_HOST and TRACING_BASIC_AUTH set: traces also go to <host>/api/public/otel with Basic auth.
    const traced = configIn({ TRACING_HOST: "https://langfuse.example", TRACING_BASIC_AUTH: "cGs6c2s=" });
    expect(traced.config.service.pipelines.traces.exporters).toEqual(["debug", "otlphttp/tracing"]);
    expect(traced.config.exporters["otlphttp/tracing"]).toEqual({
      endpoint: "${env:TRACING_HOST}/api/public/otel",
      headers: { Authorization: "Basic ${env:TRACING_BASIC_AUTH}" },
    });
    expect(traced.environment).toEqual({ TRACING_HOST: "https://langfuse.example", TRACING_BASIC_AUTH: "cGs6c2s=" });
    // Metrics and logs stay local, and both files take OTLP on the same ports.
    expect(traced.config.service.pipelines.metrics.exporters).toEqual(["debug"]);
    expect(traced.config.receivers).toEqual(plain.config.receivers);

    // TRACING_BASIC_AUTH alone: the host defaults to the orchestrator's TRACING_HOST default.
    expect(configIn({ TRACING_BASIC_AUTH: "cGs6c2s=" }).environment.TRACING_HOST).toBe("https://cloud.langfuse.com");
    // TRACING_HOST alone (no credential): nothing leaves the collector.
    expect(configIn({ TRACING_HOST: "https://langfuse.example" }).config.service.pipelines.traces.exporters).toEqual(["debug"]);
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
    // The runtime user is uid 1000, so a bind-mounted host vault stays writable.
    expect(text).toMatch(/useradd [^\n]*--uid 1000/);
    // The compiled CLIs are in the image (tick-cron and `up`'s migrations call router-cli).
    expect(text).toMatch(/^COPY --from=build \/app\/dist\/router-cli/m);
  });

  it("ships what jobs run: Claude Code (the version the tests pin), git, gh, python3, ca-certificates", () => {
    const runtime = text.slice(text.indexOf("AS runtime"));
    for (const pkg of ["git", "gh", "python3", "ca-certificates"]) expect(runtime).toMatch(new RegExp(`apt-get install [^\\n]*\\b${pkg}\\b`));
    expect(runtime).toMatch(/^COPY --from=claude \S+ \/usr\/local\/bin\/claude$/m);
    const pinned = /^ARG CLAUDE_CODE_VERSION=(\S+)$/m.exec(text)?.[1];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
    const tested = pkg.devDependencies["@anthropic-ai/claude-code"];
    if (tested !== undefined) expect(tested).toBe(pinned!);
    // Agent mode's package dir, and the agent's home, belong to the non-root user.
    expect(runtime).toContain("SERVICE_PACKAGE_DIR=/app/package");
    expect(runtime).toMatch(/chown -R brain:brain [^\n]*\/app\/package[^\n]*\/home\/brain/);
    // The first start bootstraps a router token (scripts/start.ts), as `bun run start` does.
    expect(runtime).toContain('ENTRYPOINT ["bun", "--max-http-header-size=65536", "scripts/start.ts"]');
  });
});
