// The one error shape of both services: {"error":{"code","message","details?"}}.
// Domain code throws HttpError; the shared handler (error-handler.ts) renders it.
import { z } from "@hono/zod-openapi";

export { HttpError } from "./http-error";

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
