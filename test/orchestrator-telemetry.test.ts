// The service's own job spans go to the OTLP collector; a dead collector never slows or
// fails a job.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Server } from "bun";
import { type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { until } from "./support/until";

interface OtlpAttr {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}
interface OtlpSpan {
  name: string;
  attributes: OtlpAttr[];
  status?: { code?: number };
}

describe("job spans over OTLP/HTTP", () => {
  const spans: OtlpSpan[] = [];
  let collector: Server<undefined>;
  let orch: Orchestrator;
  beforeAll(async () => {
    collector = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        if (new URL(req.url).pathname !== "/v1/traces") return new Response("no", { status: 404 });
        const body = (await req.json()) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
        return Response.json({});
      },
    });
    orch = await startOrchestrator({
      env: { SERVICE_OTEL_ENABLED: "true", OTEL_EXPORTER_OTLP_PROTOCOL: "http", OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}` },
    });
  });
  afterAll(async () => {
    await orch.stop();
    collector.stop(true);
  });

  it("exports one span per job with its id, profile and outcome", async () => {
    const job = await orch.submit({ task: "review the readme", wait: true });
    expect(job.status).toBe("succeeded");
    const attr = (s: OtlpSpan, k: string) => s.attributes.find((a) => a.key === k)?.value;
    const span = await until(() => spans.find((s) => attr(s, "job.id")?.stringValue === job.id), {
      every: 50,
      what: () => `a span for job ${job.id}; got ${JSON.stringify(spans).slice(0, 300)}`,
    });
    expect(span.name).toBe("job");
    expect(attr(span, "job.profile")?.stringValue).toBe("review");
    expect(attr(span, "job.status")?.stringValue).toBe("succeeded");
  });
});

describe("a dead collector", () => {
  let orch: Orchestrator;
  beforeAll(async () => {
    orch = await startOrchestrator({
      env: { SERVICE_OTEL_ENABLED: "true", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" },
    });
  });
  afterAll(() => orch.stop());

  it("neither slows nor fails a job", async () => {
    const started = performance.now();
    const job = await orch.submit({ task: "review the readme", wait: true });
    expect(job.status).toBe("succeeded");
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe("a collector and a tracing backend that accept and never answer", () => {
  let orch: Orchestrator;
  let silent: Server<undefined>;
  let requests = 0;
  beforeAll(async () => {
    silent = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => {
        requests++;
        return new Promise<Response>(() => {});
      },
    });
    const url = `http://127.0.0.1:${silent.port}`;
    orch = await startOrchestrator({
      env: {
        SERVICE_OTEL_ENABLED: "true",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http",
        OTEL_EXPORTER_OTLP_ENDPOINT: url,
        TRACING_HOST: url,
        TRACING_PUBLIC_KEY: "pk-lf-test",
        TRACING_SECRET_KEY: "sk-lf-test",
      },
    });
  });
  afterAll(async () => {
    await orch.stop("SIGKILL");
    silent.stop(true);
  });

  it("neither slows nor fails a job, one after another", async () => {
    for (const task of ["review the readme", "review the changelog"]) {
      const started = performance.now();
      const job = await orch.submit({ task, wait: true });
      expect(job.status).toBe("succeeded");
      expect(performance.now() - started).toBeLessThan(5_000);
    }
    // They were reached: the job did not get through by skipping them.
    await until(() => requests > 0);
  });

  it("do not hold up a shutdown", async () => {
    const t0 = performance.now();
    expect(await orch.stop("SIGTERM")).toBe(0);
    expect(performance.now() - t0).toBeLessThan(15_000);
  });
});
