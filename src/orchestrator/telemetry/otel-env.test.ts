import { describe, expect, it } from "bun:test";
import { type OtelConfig, telemetryEnv } from "./otel-env";

// Optional settings are typed as their parsed value; unset means undefined at run time.
const none = undefined as unknown as string;

const config = (c: Partial<OtelConfig> = {}): OtelConfig => ({
  otelEnabled: true,
  otelEndpoint: "http://otel-collector:4317",
  otelProtocol: "grpc",
  otelLogPrompts: false,
  otelLogToolDetails: true,
  tracingBasicAuth: none,
  ...c,
});

describe("telemetryEnv", () => {
  it("turns the agent's OTLP export on, tagged with the job", () => {
    expect(telemetryEnv(config(), { jobId: "j-1", profile: "code", podName: "pod a" })).toEqual({
      CLAUDE_CODE_ENABLE_TELEMETRY: "1",
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_LOGS_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector:4317",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_LOG_USER_PROMPTS: "0",
      OTEL_LOG_TOOL_DETAILS: "1",
      OTEL_RESOURCE_ATTRIBUTES: "job.id=j-1,job.profile=code,k8s.pod.name=pod%20a",
    });
  });

  it("maps http to http/protobuf, the prompt switch, and the collector's basic auth", () => {
    const env = telemetryEnv(config({ otelProtocol: "http", otelLogPrompts: true, tracingBasicAuth: "cGs6c2s=" }), {}, "service.namespace=team");
    expect(env).toMatchObject({
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_LOG_USER_PROMPTS: "1",
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Basic%20cGs6c2s=",
      OTEL_RESOURCE_ATTRIBUTES: "service.namespace=team",
    });
  });

  it("adds nothing when telemetry is off", () => {
    expect(telemetryEnv(config({ otelEnabled: false }), { jobId: "j" })).toEqual({});
  });
});
