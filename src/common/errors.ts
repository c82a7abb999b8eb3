// The one error shape of both services: {"error":{"code","message","details?"}}.
// Domain code throws HttpError; the shared handler (error-handler.ts) renders it.
import { z } from "@hono/zod-openapi";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "invalid_request" }),
      message: z.string().openapi({ example: "limit: must be between 1 and 100" }),
      details: z.unknown().optional(),
    }),
  })
  .openapi("Error");
export type ErrorBody = z.infer<typeof ErrorBody>;

export function errorBody(code: string, message: string, details?: unknown): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}

/** A response entry for createRoute's `responses`: the shared error body. */
export const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});
