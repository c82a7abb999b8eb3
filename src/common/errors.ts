// The one error shape of both services: {"error":{"code","message","details?"}}.
// Domain code throws DomainError (domain-error.ts); the HTTP edge maps it to an HttpError
// (http-error.ts) and the shared handler (error-handler.ts) renders it.
import { z } from "@hono/zod-openapi";

export { DomainError, type ErrorKind } from "./domain-error";
export { HttpError, httpErrorOf } from "./http-error";

/** One failing field of a 400 invalid_request (validation.ts builds them). */
const FieldIssue = z
  .object({
    path: z.string().openapi({ description: "the field, dot-separated; (body) for the body as a whole", example: "limit" }),
    message: z.string().openapi({ example: "Too big: expected number to be <=100" }),
  })
  .openapi("FieldIssue");

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "invalid_request" }),
      message: z.string().openapi({ example: "limit: must be between 1 and 100" }),
      details: z
        .union([z.array(FieldIssue), z.record(z.string(), z.unknown())])
        .optional()
        .openapi({
          description:
            "invalid_request: every failing field as {path, message}. A few 502/503 answers carry an object instead " +
            "(e.g. dispatch's bundle_id and bundle).",
        }),
    }),
  })
  .openapi("Error");
export type ErrorBody = z.infer<typeof ErrorBody>;

export type ErrorDetails = ErrorBody["error"]["details"];

export function errorBody(code: string, message: string, details?: ErrorDetails): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}

/** What a 507 means, for every write route's document. */
export const STORAGE_FULL_DESCRIPTION =
  "storage_full: the disk (or quota) the write needed is full; the message names the path. Free space there and retry (Retry-After). " +
  "The health reports (router GET /health/deep, orchestrator GET /admin/status) list each storage path's free space.";

/** A response entry for createRoute's `responses`: the shared error body. */
export const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});

/** OpenAI's error body, which the /v1 routes send (error-handler.ts, errorPayload). */
const OpenAiErrorBody = z
  .object({
    error: z.object({
      message: z.string().openapi({ example: "at least one message is required" }),
      type: z.string().openapi({
        description: "invalid_request_error, authentication_error, permission_error, not_found_error, conflict_error, rate_limit_error or server_error",
        example: "invalid_request_error",
      }),
      param: z.string().nullable().openapi({ description: "the first failing field of a 400, else null", example: "messages" }),
      code: z.string().openapi({ example: "invalid_request" }),
    }),
  })
  .openapi("OpenAIError");

/** A response entry for the /v1 routes: OpenAI's error body. */
export const openAiErrorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: OpenAiErrorBody } },
});
