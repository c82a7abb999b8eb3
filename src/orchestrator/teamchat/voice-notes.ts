// Voice in team chat: audio attachments fetched and sent through the voice backend's /stt before
// the turn, and the final answer spoken back through /speak when the user asked for voice — by
// sending a voice note, or by putting /voice in a typed message. The spoken answer goes back as
// an inline audio attachment (a data: URL) after the text answer.
import type { VoiceClient } from "../voice";
import { audioExtension } from "../voice";
import type { AudioAttachment } from "./activity";
import { checkServiceUrl, ServiceUrlRejected } from "./cloud";
import type { OutboundToken } from "./outbound-token";

/** Whole-word `/voice` in a typed message: answer this message aloud too. */
const VOICE_TOKEN = /(^|\s)\/voice(?=\s|$)/g;

/** Largest voice note fetched. */
const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

export function takeVoiceToken(text: string): { text: string; asked: boolean } {
  let asked = false;
  const stripped = text.replace(VOICE_TOKEN, (_m, lead: string) => {
    asked = true;
    return lead;
  });
  return { text: asked ? stripped.replace(/[ \t]{2,}/g, " ").trim() : text, asked };
}

export class VoiceNoteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VoiceNoteError";
  }
}

export interface AudioFetchOptions {
  token: OutboundToken;
  allowedHosts: readonly string[];
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/**
 * The attachment's bytes. An inline attachment on the platform's hosts is fetched with the bot's
 * token (it is never sent anywhere else); a pre-authorised download link needs none but must be https.
 */
async function fetchAudio(att: AudioAttachment, opts: AudioFetchOptions): Promise<Blob> {
  let url: URL;
  try {
    url = new URL(att.url);
  } catch {
    throw new VoiceNoteError("the voice note's link is not a URL");
  }
  const headers: Record<string, string> = {};
  let platform = false;
  try {
    checkServiceUrl(att.url, opts.allowedHosts);
    platform = true;
  } catch (err) {
    if (!(err instanceof ServiceUrlRejected)) throw err;
  }
  if (platform && !att.preauthorised) headers.authorization = `Bearer ${await opts.token.get()}`;
  if (!platform && url.protocol !== "https:") throw new VoiceNoteError(`the voice note's link ${url.origin} is not https`);
  let res: Response;
  try {
    res = await (opts.fetch ?? fetch)(url, { headers, signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000) });
  } catch (err) {
    throw new VoiceNoteError(`could not fetch the voice note: ${(err as Error).message}`);
  }
  if (!res.ok) throw new VoiceNoteError(`could not fetch the voice note: HTTP ${res.status}`);
  if (Number(res.headers.get("content-length") ?? 0) > MAX_AUDIO_BYTES) throw new VoiceNoteError("the voice note is larger than 25 MiB");
  const bytes = await res.arrayBuffer();
  if (bytes.byteLength > MAX_AUDIO_BYTES) throw new VoiceNoteError("the voice note is larger than 25 MiB");
  return new Blob([bytes], { type: att.mimeType });
}

/** Each attachment through /stt, transcripts joined. */
export async function transcribe(voice: VoiceClient, atts: AudioAttachment[], opts: AudioFetchOptions): Promise<string> {
  const parts: string[] = [];
  for (const att of atts) {
    const audio = await fetchAudio(att, opts);
    const name = att.name ?? `voice-note.${audioExtension(att.mimeType)}`;
    parts.push((await voice.stt(audio, { mimeType: att.mimeType, filename: name })).trim());
  }
  return parts.filter((p) => p !== "").join("\n\n");
}

/** The spoken answer as an attachment of a reply. */
export async function spokenAttachment(voice: VoiceClient, text: string): Promise<{ contentType: string; contentUrl: string; name: string }> {
  const { audio, contentType } = await voice.speak(text);
  const type = contentType.split(";")[0]!.trim() || "application/octet-stream";
  return { contentType: type, contentUrl: `data:${type};base64,${Buffer.from(audio).toString("base64")}`, name: `reply.${audioExtension(type)}` };
}
