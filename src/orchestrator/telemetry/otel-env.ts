// The agent's telemetry environment: Claude Code exports its own metrics and log events over
// OTLP when CLAUDE_CODE_ENABLE_TELEMETRY=1; we point it at the collector and tag every signal
// with the job. spec: Standard mode ("telemetry goes to a collector (OTLP)"), Configuration otel.*.
import type { OrchestratorConfig } from "../config";

export type OtelConfig = Pick<
  OrchestratorConfig,
  "otelEnabled" | "otelEndpoint" | "otelProtocol" | "otelLogPrompts" | "otelLogToolDetails" | "tracingBasicAuth"
>;

export interface TelemetryTags {
  jobId?: string;
  profile?: string;
  podName?: string;
}

// OTEL_RESOURCE_ATTRIBUTES is key=value,key=value with values percent-encoded (W3C baggage).
const encode = (v: string) => encodeURIComponent(v);

/** `inheritedAttributes`: an OTEL_RESOURCE_ATTRIBUTES the service itself was given, kept first. */
export function telemetryEnv(config: OtelConfig, tags: TelemetryTags = {}, inheritedAttributes?: string): Record<string, string> {
  if (!config.otelEnabled) return {};
  const env: Record<string, string> = {
    CLAUDE_CODE_ENABLE_TELEMETRY: "1",
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_LOGS_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_ENDPOINT: config.otelEndpoint,
    // The SDK's names: "http" in our config means OTLP over HTTP with protobuf bodies.
    OTEL_EXPORTER_OTLP_PROTOCOL: config.otelProtocol === "http" ? "http/protobuf" : config.otelProtocol,
    OTEL_LOG_USER_PROMPTS: config.otelLogPrompts ? "1" : "0",
    OTEL_LOG_TOOL_DETAILS: config.otelLogToolDetails ? "1" : "0",
  };
  const attrs: string[] = inheritedAttributes ? [inheritedAttributes] : [];
  if (tags.jobId) attrs.push(`job.id=${encode(tags.jobId)}`);
  if (tags.profile) attrs.push(`job.profile=${encode(tags.profile)}`);
  if (tags.podName) attrs.push(`k8s.pod.name=${encode(tags.podName)}`);
  if (attrs.length > 0) env.OTEL_RESOURCE_ATTRIBUTES = attrs.join(",");
  if (config.tracingBasicAuth) env.OTEL_EXPORTER_OTLP_HEADERS = `Authorization=Basic%20${config.tracingBasicAuth}`;
  return env;
}
