// The service's own job spans: one span per job, from start to its end,
// exported to the OTLP collector (SERVICE_OTEL_ENABLED, OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_PROTOCOL). Export is batched in the background with a bounded timeout,
// so a dead collector never slows or fails a job. The SDK loads with the first job, not at
// start-up: its imports are heavy and most starts run no job soon.
import type { SpanStatusCode, Tracer } from "@opentelemetry/api";
import type { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { log } from "../../common/logger";
import { VERSION } from "../../common/version";
import type { OrchestratorConfig } from "../config";
import type { Executor, ProfileLike } from "../execution/executor";

const logger = log("otel");

export type SpanConfig = Pick<OrchestratorConfig, "otelEnabled" | "otelEndpoint" | "otelProtocol" | "tracingBasicAuth" | "podName">;

export interface JobTracing {
  /** Wraps an executor so every job runs inside a span. */
  trace<P extends ProfileLike>(execute: Executor<P>): Executor<P>;
  shutdown(): Promise<void>;
}

const noTracing: JobTracing = { trace: (execute) => execute, shutdown: async () => {} };

/** OTLP/HTTP posts to <endpoint>/v1/traces; gRPC talks to the endpoint itself. */
function traceExporterUrl(config: SpanConfig): string {
  if (config.otelProtocol === "grpc") return config.otelEndpoint;
  return `${config.otelEndpoint.replace(/\/+$/, "")}/v1/traces`;
}

async function startProvider(config: SpanConfig): Promise<BasicTracerProvider> {
  const [{ BasicTracerProvider, BatchSpanProcessor }, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/resources"),
  ]);
  const headers = config.tracingBasicAuth ? { Authorization: `Basic ${config.tracingBasicAuth}` } : undefined;
  const url = traceExporterUrl(config);
  const exporter =
    config.otelProtocol === "grpc"
      ? new (await import("@opentelemetry/exporter-trace-otlp-grpc")).OTLPTraceExporter({ url, timeoutMillis: 5_000 })
      : new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter({ url, headers, timeoutMillis: 5_000 });
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "brain-stack-orchestrator", "service.version": VERSION, "k8s.pod.name": config.podName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000, exportTimeoutMillis: 5_000 })],
  });
}

export function createJobTracing(config: SpanConfig): JobTracing {
  if (!config.otelEnabled) return noTracing;
  let provider: Promise<BasicTracerProvider> | undefined;
  // With the API's status codes, loaded with the SDK (the API package alone is over a hundred modules).
  let tracer: Promise<{ t: Tracer; status: typeof SpanStatusCode }> | undefined;
  const tracerOnce = () => {
    if (!tracer) {
      provider = startProvider(config);
      tracer = Promise.all([provider, import("@opentelemetry/api")]).then(([p, api]) => ({
        t: p.getTracer("brain-stack.jobs", VERSION),
        status: api.SpanStatusCode,
      }));
    }
    return tracer;
  };
  return {
    trace: (execute) => async (req) => {
      const tracing = await tracerOnce().catch((err) => {
        logger.warn(`job spans are off: the OpenTelemetry SDK did not start (${(err as Error).message})`);
        return undefined;
      });
      if (!tracing) return execute(req);
      const { t, status } = tracing;
      const span = t.startSpan("job", {
        attributes: { "job.id": req.job.id, "job.profile": req.profile.name, "job.repo_url": req.job.repo_url ?? "", "job.base_ref": req.job.base_ref ?? "" },
      });
      try {
        const result = await execute(req);
        span.setAttributes({
          "job.status": result.status,
          "job.exit_code": result.exit_code ?? -1,
          "job.pr_url": result.pr_url ?? "",
          "job.timed_out": result.timed_out ?? false,
        });
        span.setStatus(result.status === "failed" ? { code: status.ERROR, message: result.error?.slice(0, 200) } : { code: status.OK });
        return result;
      } catch (err) {
        span.setStatus({ code: status.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
    async shutdown() {
      if (!provider) return;
      await (await provider).shutdown().catch((err) => logger.warn(`telemetry export at shutdown failed: ${(err as Error).message}`));
    },
  };
}
