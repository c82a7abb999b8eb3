// Sends activities to the bot platform (spec: Authentication, "Team-chat outbound"): POST
// {serviceUrl}/v3/conversations/{id}/activities with the bot's token, only to service URLs the
// connector may send its token to (cloud.ts). A 401 drops the token and the send is tried once
// more with a new one; a 429 waits the platform's Retry-After (seconds or an HTTP date) and tries
// again, a few times.
import { log } from "../../common/logger";
import { checkServiceUrl } from "./cloud";
import type { OutboundToken } from "./outbound-token";

const logger = log("teamchat");

export interface ConnectorOptions {
  token: OutboundToken;
  allowedHosts: readonly string[];
  fetch?: typeof fetch;
  /** Retries after 429s (default 5). */
  maxRetries?: number;
  /** Longest wait a Retry-After may ask for before the send is given up (default 60 s). */
  maxRetryAfterMs?: number;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

export class SendError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "SendError";
  }
}

/** An activity as the platform takes it (the members we send). */
export interface OutgoingActivity {
  type: "message" | "typing";
  text?: string;
  textFormat?: "markdown" | "plain" | "xml";
  attachments?: Array<{ contentType: string; contentUrl?: string; content?: unknown; name?: string }>;
  from?: { id: string; name?: string };
  recipient?: { id: string; name?: string; aadObjectId?: string };
  conversation?: { id: string };
  replyToId?: string;
}

/** Milliseconds a Retry-After header asks for (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const t = header.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export class Connector {
  private readonly fetch: typeof fetch;

  constructor(private readonly opts: ConnectorOptions) {
    this.fetch = opts.fetch ?? fetch;
  }

  /** The activities URL of a conversation, or ServiceUrlRejected when the token may not go there. */
  activitiesUrl(serviceUrl: string, conversationId: string): string {
    const base = checkServiceUrl(serviceUrl, this.opts.allowedHosts).toString().replace(/\/+$/, "");
    return `${base}/v3/conversations/${encodeURIComponent(conversationId.toWellFormed())}/activities`;
  }

  /** Sends one activity; SendError when the platform keeps refusing it. */
  async send(serviceUrl: string, conversationId: string, activity: OutgoingActivity): Promise<void> {
    const url = this.activitiesUrl(serviceUrl, conversationId);
    const maxRetries = this.opts.maxRetries ?? 5;
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const token = await this.opts.token.get();
      let res: Response;
      try {
        res = await this.fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify(activity),
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
        });
      } catch (err) {
        throw new SendError(`could not reach the bot platform at ${new URL(url).origin}: ${(err as Error).message}`);
      }
      if (res.ok) {
        await res.body?.cancel().catch(() => undefined);
        return;
      }
      const detail = (await res.text().catch(() => "")).replace(/\s+/g, " ").trim().slice(0, 300);
      if (res.status === 401 && !refreshed) {
        refreshed = true;
        this.opts.token.invalidate(token);
        logger.info("the bot platform refused the bot token (401); getting a new one and sending again");
        continue;
      }
      if (res.status === 429 && attempt < maxRetries) {
        const wait = retryAfterMs(res.headers.get("retry-after")) ?? Math.min(1000 * 2 ** attempt, 30_000);
        if (wait > (this.opts.maxRetryAfterMs ?? 60_000)) {
          throw new SendError(`the bot platform asks to wait ${Math.round(wait / 1000)} s (429): message dropped`, 429);
        }
        logger.info(`the bot platform is rate limiting this conversation (429): sending again in ${wait} ms`);
        await Bun.sleep(wait);
        continue;
      }
      throw new SendError(`the bot platform answered HTTP ${res.status}${detail ? `: ${detail}` : ""}`, res.status);
    }
  }
}
