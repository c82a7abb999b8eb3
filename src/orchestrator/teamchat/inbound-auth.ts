// Team-chat inbound authentication (spec: Authentication, "Team-chat inbound"): the platform's
// JWT in Authorization: Bearer — RS256 only, the configured issuer, audience the bot's app id,
// signed by a key from the platform's OpenID metadata (endorsed for the activity's channel when
// the key says so), and its serviceurl claim equal to the activity's serviceUrl, so a valid token
// cannot be replayed to make the bot send its own token somewhere else.
import { errors, type JWTPayload, jwtVerify } from "jose";
import { bearerFrom } from "../../common/middleware/bearer-auth";
import { type SigningKeys, SigningKeysUnavailable, UnknownSigningKey } from "./signing-keys";

/** Clock skew the platform's tokens are allowed (its own SDKs allow 5 minutes). */
const CLOCK_TOLERANCE_SECONDS = 300;

export class BotAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BotAuthError";
  }
}

export interface InboundAuthOptions {
  keys: SigningKeys;
  appId: string;
  issuer: string;
}

/** The activity members the token is checked against. */
export interface ActivityBinding {
  serviceUrl?: unknown;
  channelId?: unknown;
}

/** Same URL up to trailing slashes and the host's case. */
function sameServiceUrl(a: string, b: string): boolean {
  const norm = (s: string) => {
    try {
      const u = new URL(s);
      return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}${u.search}`.toLowerCase();
    } catch {
      return s.replace(/\/+$/, "").toLowerCase();
    }
  };
  return norm(a) === norm(b);
}

/**
 * The verified token's claims; BotAuthError for every reason to refuse (the route answers 401),
 * SigningKeysUnavailable when the keys cannot be fetched and none are cached (503).
 */
export async function verifyInbound(authorization: string | undefined, activity: ActivityBinding | undefined, opts: InboundAuthOptions): Promise<JWTPayload> {
  const token = bearerFrom(authorization);
  if (!token) throw new BotAuthError("missing bearer token: the bot platform signs every activity it sends");
  const channelId = typeof activity?.channelId === "string" ? activity.channelId : undefined;
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, (header) => opts.keys.key(header.kid, channelId), {
      algorithms: ["RS256"],
      issuer: opts.issuer,
      audience: opts.appId,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ["exp"],
    }));
  } catch (err) {
    throw toAuthError(err);
  }
  const claim = payload.serviceurl ?? payload.serviceUrl;
  const serviceUrl = activity?.serviceUrl;
  if (typeof claim !== "string" || claim === "") throw new BotAuthError("the token has no serviceurl claim");
  if (typeof serviceUrl !== "string" || !sameServiceUrl(claim, serviceUrl)) {
    throw new BotAuthError(`the token's serviceurl claim ${claim} does not match the activity's serviceUrl ${String(serviceUrl)}`);
  }
  return payload;
}

function toAuthError(err: unknown): Error {
  if (err instanceof SigningKeysUnavailable) return err;
  if (err instanceof UnknownSigningKey) return new BotAuthError(err.message);
  if (err instanceof errors.JWTExpired) return new BotAuthError("the token has expired");
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "iss") return new BotAuthError("the token's issuer is not the bot platform's");
    if (err.claim === "aud") return new BotAuthError("the token's audience is not this bot's app id");
    if (err.claim === "nbf") return new BotAuthError("the token is not valid yet");
    return new BotAuthError(`the token's ${err.claim} claim is not accepted: ${err.message}`);
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return new BotAuthError("the token's signature does not verify");
  if (err instanceof errors.JOSEAlgNotAllowed) return new BotAuthError("the token is not signed with RS256");
  if (err instanceof errors.JOSEError) return new BotAuthError(`the token is not accepted: ${err.message}`);
  return new BotAuthError(`the token is not accepted: ${(err as Error).message}`);
}
