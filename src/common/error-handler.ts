// One error handler and one 404 for both services. Every non-2xx leaves as
// {"error":{"code","message","details?"}}; paths under /v1 use OpenAI's shape instead
// (spec: job-orchestrator, POST /v1/chat/completions) so OpenAI SDKs can read them.
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ZodError } from "zod";
import { type ErrorDetails, errorBody } from "./errors";
import { httpErrorOf } from "./http-error";
import { log } from "./logger";
import { describeZodError } from "./validation";

const logger = log("http");

/** Which paths answer in OpenAI's error shape. */
export type OpenAiPathTest = (path: string) => boolean;
export const isOpenAiPath: OpenAiPathTest = (path) => path === "/v1" || path.startsWith("/v1/");

const OPENAI_TYPES: Partial<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  413: "invalid_request_error",
  429: "rate_limit_error",
};

/** The body of an error answer on `path`: OpenAI's shape under /v1 (as `openAi` says), else ours. */
export function errorPayload(path: string, status: number, code: string, message: string, details?: unknown, openAi: OpenAiPathTest = isOpenAiPath): unknown {
  if (openAi(path)) {
    const type = OPENAI_TYPES[status] ?? (status >= 500 ? "server_error" : "invalid_request_error");
    const param = Array.isArray(details) && details.length > 0 ? String(details[0]?.path ?? "") || null : null;
    return { error: { message, type, param, code } };
  }
  return errorBody(code, message, details as ErrorDetails);
}

export function renderError(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
  details?: unknown,
  openAi: OpenAiPathTest = isOpenAiPath,
): Response {
  return c.json(errorPayload(c.req.path, status, code, message, details, openAi) as object, status);
}

function fromHttpException(err: HTTPException): { status: ContentfulStatusCode; code: string; message: string } {
  const status = err.status as ContentfulStatusCode;
  if (status === 400 && /json/i.test(err.message)) {
    return { status, code: "invalid_json", message: "the request body is not valid JSON" };
  }
  if (status === 413) {
    return { status, code: "payload_too_large", message: "the request body is larger than the server accepts" };
  }
  if (status === 401) return { status, code: "unauthorized", message: err.message || "unauthorized" };
  return { status, code: `http_${status}`, message: err.message || "request failed" };
}

export function createErrorHandler(openAi: OpenAiPathTest = isOpenAiPath): ErrorHandler {
  return function errorHandler(err, c) {
    const e = httpErrorOf(err);
    if (e) {
      for (const [k, v] of Object.entries(e.headers ?? {})) c.header(k, v);
      return renderError(c, e.status, e.code, e.message, e.details, openAi);
    }
    if (err instanceof HTTPException) {
      const { status, code, message } = fromHttpException(err);
      return renderError(c, status, code, message, undefined, openAi);
    }
    if (err instanceof ZodError) {
      const { message, details } = describeZodError(err);
      return renderError(c, 400, "invalid_request", message, details, openAi);
    }
    logger.error(`unhandled error on ${c.req.method} ${c.req.path} (request ${(c.env as { requestId?: string } | undefined)?.requestId ?? "-"}):`, err);
    return renderError(c, 500, "internal_error", "the server failed to handle this request; see its log", undefined, openAi);
  };
}

export function createNotFoundHandler(openAi: OpenAiPathTest = isOpenAiPath): NotFoundHandler {
  return function notFound(c) {
    return renderError(c, 404, "not_found", `no route for ${c.req.method} ${c.req.path}`, undefined, openAi);
  };
}
