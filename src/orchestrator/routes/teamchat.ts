// POST /api/messages (spec: Endpoints; Authentication, "Team-chat inbound"): the bot platform's
// webhook, registered only when TEAMCHAT_APP_ID and TEAMCHAT_APP_PASSWORD are set. It is
// authenticated by the platform's JWT, not by SERVICE_API_KEYS, and answers at once — 202 when a
// message was taken (the turn and its replies run in the background), 200 for activities it
// ignores — because the platform retries a webhook that is slow to answer.
import { createRoute, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { errorResponse, HttpError, STORAGE_FULL_DESCRIPTION } from "../../common/errors";
import { log } from "../../common/logger";
import type { Authorize } from "../../common/middleware/bearer-auth";
import type { OrchestratorApp, OrchestratorEnv } from "../app-types";
import { ServiceUrlRejected } from "../teamchat/cloud";
import type { TeamChatDeps } from "../teamchat/deps";
import { BotAuthError, verifyInbound } from "../teamchat/inbound-auth";
import { SigningKeysUnavailable } from "../teamchat/signing-keys";

const logger = log("teamchat");

export const TEAMCHAT_PATH = "/api/messages";

const Account = z.object({ id: z.string().optional(), name: z.string().optional(), aadObjectId: z.string().optional() }).loose();

const BotActivity = z
  .object({
    type: z.string().openapi({ example: "message" }),
    id: z.string().optional(),
    serviceUrl: z.string().optional().openapi({ example: "https://smba.trafficmanager.net/emea/" }),
    channelId: z.string().optional().openapi({ example: "msteams" }),
    from: Account.optional(),
    recipient: Account.optional(),
    conversation: z
      .object({ id: z.string().optional(), conversationType: z.string().optional(), isGroup: z.boolean().optional(), tenantId: z.string().optional() })
      .loose()
      .optional(),
    text: z.string().optional(),
    attachments: z
      .array(
        z
          .object({ contentType: z.string().optional(), contentUrl: z.string().optional(), content: z.unknown().optional(), name: z.string().optional() })
          .loose(),
      )
      .optional(),
  })
  .loose()
  .openapi("BotActivity");

const route = createRoute({
  method: "post",
  path: TEAMCHAT_PATH,
  operationId: "receiveTeamChatActivity",
  tags: ["team chat"],
  summary: "Bot platform webhook (Microsoft Teams)",
  description:
    "Inbound activities from the bot platform. Authenticated by the platform's JWT (RS256, issuer TEAMCHAT_ISSUER, audience " +
    "TEAMCHAT_APP_ID, keys from TEAMCHAT_OPENID_METADATA_URL, serviceurl claim equal to the activity's serviceUrl), not by " +
    "SERVICE_API_KEYS. One-to-one chats only; with TEAMCHAT_OWNER_OBJECT_ID only that user is served. Replies are posted to " +
    "{serviceUrl}/v3/conversations/{id}/activities in the background. Registered only when TEAMCHAT_APP_ID and " +
    "TEAMCHAT_APP_PASSWORD are set.",
  security: [],
  request: { body: { required: true, content: { "application/json": { schema: BotActivity } } } },
  responses: {
    200: { description: "Not a message (conversationUpdate, typing, …) or a re-delivered one: nothing to do" },
    202: { description: "Message taken: the turn (or the refusal, or the still-working reply) is sent to the conversation" },
    400: errorResponse("Not an activity"),
    401: errorResponse("Missing or invalid platform token (signature, issuer, audience, expiry, serviceurl claim)"),
    403: errorResponse("The activity's serviceUrl is not one replies may go to (not a platform host, or a sovereign cloud)"),
    503: errorResponse("The platform's signing keys cannot be fetched right now, or the service is shutting down (Retry-After)"),
    507: errorResponse(STORAGE_FULL_DESCRIPTION),
  },
});

/** Team chat's deps, from the app's bindings (the route is registered only when team chat is on). */
function teamChatOf(c: Context<OrchestratorEnv>): TeamChatDeps {
  const deps = c.env.deps.teamChat;
  if (!deps) throw new HttpError(404, "not_found", "team chat is off (TEAMCHAT_APP_ID and TEAMCHAT_APP_PASSWORD)");
  return deps;
}

/** The platform's JWT, checked before the body is validated (a bad token is 401 whatever it sent). */
function platformAuth(): MiddlewareHandler<OrchestratorEnv> {
  let warned = false;
  return async function platformAuth(c, next) {
    const deps = teamChatOf(c);
    if (!deps.auth) {
      if (!warned) {
        warned = true;
        logger.warn("⚠ TEAMCHAT_SKIP_JWT_VALIDATION is on: accepting an activity without checking its token");
      }
      return next();
    }
    const activity = (await c.req.json().catch(() => undefined)) as { serviceUrl?: unknown; channelId?: unknown } | undefined;
    try {
      await verifyInbound(c.req.header("authorization"), activity, deps.auth);
    } catch (err) {
      if (err instanceof SigningKeysUnavailable) throw new HttpError(503, "signing_keys_unavailable", err.message, undefined, { "Retry-After": "30" });
      if (err instanceof BotAuthError) {
        logger.warn(`team chat: refused an activity: ${err.message}`);
        throw new HttpError(401, "unauthorized", err.message, undefined, { "WWW-Authenticate": 'Bearer error="invalid_token"' });
      }
      throw err;
    }
    return next();
  };
}

/** POST /api/messages; the app registers it only when team chat is on. */
export function registerTeamChat(app: OrchestratorApp): void {
  app.openapi({ ...route, middleware: [platformAuth()] }, (c) => {
    let verdict;
    try {
      verdict = teamChatOf(c).bot.receive(c.req.valid("json"));
    } catch (err) {
      if (err instanceof ServiceUrlRejected) throw new HttpError(403, "service_url_not_allowed", err.message);
      throw err;
    }
    return c.body(null, verdict === "ignored" || verdict === "duplicate" ? 200 : 202);
  });
}

/**
 * The service's API-key middleware with the webhook left out: the platform cannot send
 * SERVICE_API_KEYS, it proves itself with its JWT (checked by the route). Only when team chat is on.
 */
export function exceptTeamChat(authorize: Authorize, teamChat: TeamChatDeps | undefined): Authorize {
  if (!teamChat) return authorize;
  return function exceptTeamChat(req) {
    if (req.method === "POST" && req.path === TEAMCHAT_PATH) return;
    authorize(req);
  };
}

export { createTeamChatDeps, type TeamChatDeps } from "../teamchat/deps";
