// What the voice adapter raises (spec: Errors): a quota or billing refusal is its own error, so
// the chat surfaces it to the user instead of quietly falling back; every other HTTP failure
// carries its status for the caller to handle.

export class VoiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VoiceError";
  }
}

/** The voice backend refused for quota or billing reasons (402, or a 401/403/429 that says so). */
export class VoiceQuotaError extends VoiceError {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`the voice service's quota or billing limit is reached (HTTP ${status}${detail ? `: ${detail}` : ""})`);
    this.name = "VoiceQuotaError";
  }
}

/** Any other non-2xx answer of the voice backend. */
export class VoiceStatusError extends VoiceError {
  constructor(
    readonly status: number,
    readonly call: string,
    readonly detail: string,
  ) {
    super(`the voice service answered ${call} with HTTP ${status}${detail ? `: ${detail}` : ""}`);
    this.name = "VoiceStatusError";
  }
}

/** No answer within the client timeout (VOICE_TIMEOUT_SECONDS). */
export class VoiceTimeoutError extends VoiceError {
  constructor(
    readonly call: string,
    readonly timeoutMs: number,
  ) {
    super(`the voice service did not answer ${call} within ${Math.round(timeoutMs / 100) / 10} s`);
    this.name = "VoiceTimeoutError";
  }
}
