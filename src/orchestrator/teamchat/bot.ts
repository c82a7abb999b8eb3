// The team-chat bot: what happens to an activity once its token is accepted. The decision is
// made at once (the route answers the platform within milliseconds, since it retries slow
// webhooks); the work — voice notes through /stt, the agent turn, the rendered replies, the
// spoken answer — runs in the background.
//
// - only messages are acted on; other activity types (conversationUpdate, typing, …) are ignored;
// - one-to-one chats only: a channel or group chat gets a clear reply (spec: Team-chat scope);
// - TEAMCHAT_OWNER_OBJECT_ID: anyone else gets a polite refusal and no turn;
// - one running turn per conversation: another message meanwhile gets the short still-working
//   reply and starts nothing (spec: Errors). The turn counts until its last reply is delivered,
//   so two turns' messages never interleave;
// - the turn goes through the agent-mode chat service with the Teams conversation id as the
//   conversation (so the agent session resumes across messages), the sender's object id as the
//   user, the visibility config scoped to {HUB_AGENT}:teamchat:{conversation_id}, and the
//   stored history for a first turn;
// - the platform re-delivers an activity it thinks was lost: an id seen in the last 10 minutes
//   is ignored.
import { DomainError } from "../../common/domain-error";
import { log } from "../../common/logger";
import { visible } from "../chat/openai-chunks";
import type { ChatMessage, ChatOpening, ChatRequest } from "../chat/service";
import { parseSlashTokens } from "../chat/slash-tokens";
import type { VoiceClient } from "../voice";
import { VoiceError } from "../voice";
import { type Activity, audioAttachments, conversationKind, messageText, replyTo } from "./activity";
import { checkServiceUrl } from "./cloud";
import type { Connector, OutgoingActivity } from "./connector";
import type { TeamChatHistory } from "./history";
import type { OutboundToken } from "./outbound-token";
import { renderVisibility, TeamChatRenderer } from "./render";
import { spokenAttachment, takeVoiceToken, transcribe, VoiceNoteError } from "./voice-notes";

const logger = log("teamchat");

export const REPLIES = {
  notOwner: "Sorry, I only work for my owner, so I can't help you here.",
  notPersonal: "I only answer in one-to-one chats. Message me directly to talk to me.",
  stillWorking: "⏳ Still working on your previous message. I'll answer it first; send this one again once I have.",
  nothingToRead: "I can read text messages and voice notes; this message has neither.",
  noVoice: "**Error:** voice notes need the voice service, which is not configured here (VOICE_SERVICE_URL). Please type your message.",
  nothingHeard: "I couldn't make out any words in that voice note. Please try again or type your message.",
} as const;

const DUPLICATE_WINDOW_MS = 10 * 60_000;

/** What became of an activity. */
export type Verdict = "turn" | "refused" | "busy" | "ignored" | "duplicate";

export interface TeamChatBotDeps {
  agentId: string;
  chat: { open(req: ChatRequest): Promise<ChatOpening> };
  connector: Connector;
  token: OutboundToken;
  history: TeamChatHistory;
  /** The voice adapter, created on first use; undefined when VOICE_SERVICE_URL is unset. */
  voice: () => VoiceClient | undefined;
  ownerObjectId?: string;
  allowedHosts: readonly string[];
  flushChars: number;
  fetch?: typeof fetch;
}

/** Sends one turn's replies in order, one after the other, while the turn goes on producing them. */
class Outbox {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly deliver: (a: OutgoingActivity) => Promise<void>) {}

  push(a: OutgoingActivity): void {
    this.tail = this.tail.then(() => this.deliver(a));
  }

  drained(): Promise<void> {
    return this.tail;
  }
}

export class TeamChatBot {
  private readonly busy = new Set<string>();
  private readonly seen = new Map<string, number>();
  private readonly tasks = new Set<Promise<void>>();
  private closing = false;

  constructor(private readonly deps: TeamChatBotDeps) {}

  /** Conversations with a turn in progress. */
  get running(): number {
    return this.busy.size;
  }

  /**
   * Decides what to do with an activity and starts it in the background. Throws ServiceUrlRejected
   * (before anything is sent) when replies could not go to its serviceUrl.
   */
  receive(a: Activity): Verdict {
    if (typeof a.serviceUrl === "string" || a.type === "message") checkServiceUrl(a.serviceUrl, this.deps.allowedHosts);
    if (a.type !== "message") return "ignored";
    // Shutting down: the platform delivers it again (to this pod once it is back, or another).
    if (this.closing)
      throw new DomainError("unavailable", "shutting_down", "the service is shutting down; deliver the activity again", { retryAfterSeconds: 5 });
    const conversationId = a.conversation?.id;
    if (!conversationId) throw new DomainError("invalid", "invalid_request", "conversation.id: a message activity names its conversation");
    if (this.isDuplicate(a.id)) return "duplicate";

    if (conversationKind(a) !== "personal") {
      logger.info(`team chat: refused a ${conversationKind(a)} message in ${conversationId}`);
      this.background(this.reply(a, REPLIES.notPersonal));
      return "refused";
    }
    const owner = this.deps.ownerObjectId;
    if (owner && (a.from?.aadObjectId ?? "").toLowerCase() !== owner.toLowerCase()) {
      logger.info(`team chat: refused a message from ${a.from?.aadObjectId ?? a.from?.id ?? "an unknown sender"} (not the owner)`);
      this.background(this.reply(a, REPLIES.notOwner));
      return "refused";
    }
    if (this.busy.has(conversationId)) {
      this.background(this.reply(a, REPLIES.stillWorking));
      return "busy";
    }
    this.busy.add(conversationId);
    this.background(
      this.turn(a, conversationId).finally(() => {
        this.busy.delete(conversationId);
      }),
    );
    return "turn";
  }

  /** Waits for the background work (every turn and reply) to finish, at most timeoutMs. */
  async idle(timeoutMs = 30_000): Promise<void> {
    const all = Promise.allSettled([...this.tasks]);
    // A plain timer, cleared once the work is done: a pending sleep would hold the process open at shutdown.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  /** No new work; waits for what runs (the agent-mode service cancels the turns themselves). */
  async close(timeoutMs = 10_000): Promise<void> {
    this.closing = true;
    await this.idle(timeoutMs);
  }

  private isDuplicate(id: string | undefined): boolean {
    if (!id) return false;
    const now = Date.now();
    if ((this.seen.get(id) ?? 0) > now) return true;
    if (this.seen.size > 1000) for (const [k, until] of this.seen) if (until <= now) this.seen.delete(k);
    this.seen.set(id, now + DUPLICATE_WINDOW_MS);
    return false;
  }

  private background(p: Promise<void>): void {
    const task = p.catch((err: Error) => logger.error(`team chat: ${err.message}`));
    this.tasks.add(task);
    void task.finally(() => this.tasks.delete(task));
  }

  private send(a: Activity, body: OutgoingActivity): Promise<void> {
    return this.deps.connector.send(a.serviceUrl!, a.conversation!.id!, body);
  }

  private reply(a: Activity, text: string): Promise<void> {
    return this.send(a, replyTo(a, { type: "message", text, textFormat: "markdown" }));
  }

  private async turn(a: Activity, conversationId: string): Promise<void> {
    const outbox = new Outbox((body) =>
      this.send(a, body).catch((err: Error) => logger.warn(`team chat: a reply to ${conversationId} was not delivered: ${err.message}`)),
    );
    const say = (text: string) => outbox.push(replyTo(a, { type: "message", text, textFormat: "markdown" }));
    outbox.push(replyTo(a, { type: "typing" }));
    try {
      await this.converse(a, conversationId, say, outbox);
    } catch (err) {
      logger.error(`team chat: the turn in ${conversationId} failed: ${(err as Error).message}`);
      say(`**Error:** ${(err as Error).message}`);
    } finally {
      await outbox.drained();
    }
  }

  private async converse(a: Activity, conversationId: string, say: (text: string) => void, outbox: Outbox): Promise<void> {
    const typed = takeVoiceToken(messageText(a));
    const audio = audioAttachments(a);
    const wantsVoice = typed.asked || audio.length > 0;
    let text = typed.text;

    if (audio.length > 0) {
      const voice = this.deps.voice();
      if (!voice) return say(REPLIES.noVoice);
      let heard: string;
      try {
        heard = await transcribe(voice, audio, { token: this.deps.token, allowedHosts: this.deps.allowedHosts, fetch: this.deps.fetch });
      } catch (err) {
        // spec: Errors — a quota or billing refusal reaches the user; no silent fallback.
        if (err instanceof VoiceError || err instanceof VoiceNoteError) return say(`**Error:** ${err.message}. The voice note was not transcribed.`);
        throw err;
      }
      if (heard === "") return say(REPLIES.nothingHeard);
      say(`**Heard:** ${heard}`);
      text = [text, heard].filter((t) => t !== "").join("\n\n");
    }
    if (text === "") return say(REPLIES.nothingToRead);

    const history = await this.deps.history.get(conversationId);
    const userId = a.from?.aadObjectId ?? a.from?.id ?? "anonymous";
    const messages: ChatMessage[] = [...history.map((h) => ({ role: h.role, content: h.text })), { role: "user", content: text }];
    let opening: ChatOpening;
    try {
      opening = await this.deps.chat.open({
        messages,
        // The Teams conversation is the conversation (tier 2), the sender scopes it; no client headers here.
        metadata: { conversation_id: conversationId },
        header: (name) => (name === "x-user-id" ? userId : undefined),
        visibilityScope: `${this.deps.agentId}:teamchat:${conversationId}`,
      });
    } catch (err) {
      if (err instanceof DomainError && err.code === "conversation_busy") return say(REPLIES.stillWorking);
      if (err instanceof DomainError) return say(`**Error:** ${err.message}`);
      throw err;
    }
    if (opening.kind === "config") return say(renderVisibility(opening.visibility));

    const renderer = new TeamChatRenderer(opening.visibility, { flushChars: this.deps.flushChars });
    let final: string | undefined;
    for await (const ev of opening.events) {
      if (ev.type === "final") final = ev.text;
      for (const m of renderer.push(ev)) say(m);
    }
    for (const m of renderer.end()) say(m);

    await this.deps.history.append(conversationId, "user", parseSlashTokens(text).text);
    if (final !== undefined) await this.deps.history.append(conversationId, "assistant", final);

    if (wantsVoice && final !== undefined && visible({ type: "final", text: final }, opening.visibility)) {
      const voice = this.deps.voice();
      if (!voice) return say("**Error:** a spoken answer needs the voice service, which is not configured here (VOICE_SERVICE_URL).");
      try {
        const attachment = await spokenAttachment(voice, final);
        outbox.push(replyTo(a, { type: "message", attachments: [attachment] }));
      } catch (err) {
        if (err instanceof VoiceError) return say(`**Error:** ${err.message}. The answer above was not spoken.`);
        throw err;
      }
    }
  }
}
