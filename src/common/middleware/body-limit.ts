// Refuses bodies over MAX_BODY_BYTES with 413 in the shared error shape. The edge (http/edge.ts)
// applies it before the app's dispatch, so a POST's route keeps Hono's shorter handler chain
// (as a middleware on every body method it was a large share of the edge's cost).
import { HttpError } from "../errors";

/** The methods whose requests carry a body. */
export const BODY_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

const tooLarge = (maxBytes: number) => new HttpError(413, "payload_too_large", `the request body is larger than ${maxBytes} bytes (MAX_BODY_BYTES)`);

/**
 * The request with its body within `maxBytes`, or a 413 HttpError thrown (or rejected). A
 * declared Content-Length is checked as it stands; a body without one (chunked) is read up to
 * the limit and handed on buffered, so what the app reads is what was counted.
 */
export function limitBody(req: Request, method: string, maxBytes: number): Request | Promise<Request> {
  if (!BODY_METHODS.has(method)) return req;
  const headers = req.headers;
  const length = headers.get("content-length");
  if (length !== null && !headers.has("transfer-encoding")) {
    if (Number.parseInt(length, 10) > maxBytes) throw tooLarge(maxBytes);
    return req;
  }
  // Read only here: asking a request for its stream takes it off Bun's buffered fast path.
  const body = req.body;
  return body === null ? req : readLimited(req, body, maxBytes);
}

async function readLimited(req: Request, body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Request> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      void reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return new Request(req, { body: Buffer.concat(chunks, size) });
}
