// The voice adapter as the service uses it: created on first use from the config, then the same
// instance every time (spec: "stateless, created on first use and reused"). Off when
// VOICE_SERVICE_URL is unset.
import type { OrchestratorConfig } from "../config";
import { VoiceClient } from "./client";

export type VoiceConfig = Pick<OrchestratorConfig, "voiceServiceUrl" | "voiceApiKey" | "voiceTimeout">;

/** A getter for the one VoiceClient: undefined when voice is not configured. */
export function lazyVoiceClient(config: VoiceConfig, opts: { fetch?: typeof fetch } = {}): () => VoiceClient | undefined {
  let client: VoiceClient | undefined;
  return () => {
    if (!config.voiceServiceUrl) return undefined;
    client ??= new VoiceClient({ baseUrl: config.voiceServiceUrl, apiKey: config.voiceApiKey, timeoutMs: config.voiceTimeout * 1000, fetch: opts.fetch });
    return client;
  };
}

export { audioExtension, VoiceClient } from "./client";
export { VoiceError, VoiceQuotaError, VoiceStatusError, VoiceTimeoutError } from "./errors";
