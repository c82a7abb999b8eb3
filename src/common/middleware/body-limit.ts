// Refuses bodies over MAX_BODY_BYTES with 413 in the shared error shape.
import type { MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import { HttpError } from "../errors";

export function bodyLimit(maxBytes: number): MiddlewareHandler {
  return honoBodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new HttpError(413, "payload_too_large", `the request body is larger than ${maxBytes} bytes (MAX_BODY_BYTES)`);
    },
  });
}
