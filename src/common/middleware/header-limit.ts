// Over-long request lines and header blocks answer in the JSON error shape. Bun refuses a
// request whose head is over its own limit (--max-http-header-size) with a bare 431 before any
// handler runs; so the service is started with Bun's limit raised (package.json's start, the
// image's entrypoint) and enforces MAX_HEAD_BYTES itself, here, where it can say what was too
// long. A head over Bun's raised limit still gets Bun's bare 431.
import { maxHeaderSize } from "node:http";
import { HttpError } from "../http-error";

/** The request head the services accept: the request line and the headers, in bytes (about). */
export const MAX_HEAD_BYTES = 16 * 1024;

/** Whether the check can ever fire: only when Bun lets longer heads through to the service. */
export const headLimitApplies = maxHeaderSize > MAX_HEAD_BYTES;

/** A 414 (request line) or 431 (headers) when the request's head is over MAX_HEAD_BYTES; else undefined. */
export function oversizedHead(req: Request, method: string): HttpError | undefined {
  // "GET <url> HTTP/1.1\r\n"
  const line = method.length + req.url.length + 11;
  if (line > MAX_HEAD_BYTES) {
    return new HttpError(414, "uri_too_long", `the request line is longer than ${MAX_HEAD_BYTES} bytes: send long input in a POST body`);
  }
  let size = line;
  // "<name>: <value>\r\n"
  for (const [name, value] of req.headers) size += name.length + value.length + 4;
  if (size > MAX_HEAD_BYTES) {
    return new HttpError(431, "headers_too_large", `the request's headers are larger than ${MAX_HEAD_BYTES} bytes in all`);
  }
  return undefined;
}
