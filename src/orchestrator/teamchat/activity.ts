// The bot platform's activity as the connector reads it (only the members it uses), and what it
// derives from one: the message text, the conversation kind, the audio attachments, a reply.
import type { OutgoingActivity } from "./connector";

export interface ChannelAccount {
  id?: string;
  name?: string;
  /** The sender's directory object id (what the owner filter matches). */
  aadObjectId?: string;
}

export interface Attachment {
  contentType?: string;
  contentUrl?: string;
  content?: unknown;
  name?: string;
}

export interface Activity {
  type?: string;
  id?: string;
  serviceUrl?: string;
  channelId?: string;
  from?: ChannelAccount;
  recipient?: ChannelAccount;
  conversation?: { id?: string; conversationType?: string; isGroup?: boolean; tenantId?: string };
  text?: string;
  attachments?: Attachment[];
  [k: string]: unknown;
}

export type ConversationKind = "personal" | "groupChat" | "channel";

export function conversationKind(a: Activity): ConversationKind {
  const t = a.conversation?.conversationType;
  if (t === "channel") return "channel";
  if (t === "groupChat" || a.conversation?.isGroup === true) return "groupChat";
  return "personal";
}

/** The typed text: mentions of the bot (<at>…</at>) removed, a few entities decoded, trimmed. */
export function messageText(a: Activity): string {
  if (typeof a.text !== "string") return "";
  return a.text
    .replace(/<at>[^<]*<\/at>/gi, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .trim();
}

const AUDIO_TYPES: Record<string, string> = {
  ogg: "audio/ogg",
  oga: "audio/ogg",
  opus: "audio/ogg",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  mp4: "audio/mp4",
  aac: "audio/aac",
  wav: "audio/wav",
  webm: "audio/webm",
  flac: "audio/flac",
  amr: "audio/amr",
};

export interface AudioAttachment {
  url: string;
  mimeType: string;
  name?: string;
  /** A file download link is pre-authorised; an inline attachment may need the bot's token. */
  preauthorised: boolean;
}

/** Voice notes and audio files: inline audio/* attachments and Teams file-download links to audio files. */
export function audioAttachments(a: Activity): AudioAttachment[] {
  const out: AudioAttachment[] = [];
  for (const att of a.attachments ?? []) {
    const type = (att.contentType ?? "").toLowerCase();
    if (type.startsWith("audio/") && typeof att.contentUrl === "string") {
      out.push({ url: att.contentUrl, mimeType: type, name: att.name, preauthorised: false });
    } else if (type === "application/vnd.microsoft.teams.file.download.info") {
      const c = (att.content ?? {}) as { downloadUrl?: unknown; fileType?: unknown };
      const ext = typeof c.fileType === "string" ? c.fileType.toLowerCase() : ((att.name ?? "").split(".").pop()?.toLowerCase() ?? "");
      if (typeof c.downloadUrl === "string" && AUDIO_TYPES[ext]) {
        out.push({ url: c.downloadUrl, mimeType: AUDIO_TYPES[ext]!, name: att.name, preauthorised: true });
      }
    }
  }
  return out;
}

/** A reply in the activity's conversation: from the bot, to the sender. */
export function replyTo(a: Activity, body: Omit<OutgoingActivity, "from" | "recipient" | "conversation" | "replyToId">): OutgoingActivity {
  return {
    ...body,
    ...(a.recipient?.id ? { from: { id: a.recipient.id, name: a.recipient.name } } : {}),
    ...(a.from?.id ? { recipient: { id: a.from.id, name: a.from.name, aadObjectId: a.from.aadObjectId } } : {}),
    conversation: { id: a.conversation?.id ?? "" },
    ...(a.id ? { replyToId: a.id } : {}),
  };
}
