// Lifts Bun's idle timeout for one request (a wait for a job, a stream): the shared helper
// (common/http/sse.ts), given the route's context.
import type { Context } from "hono";
import { keepOpen as keepRequestOpen } from "../../common/http/sse";
import type { EdgeBindings } from "../../common/middleware/stack";

export function keepOpen(c: Context): void {
  keepRequestOpen((c.env as Partial<EdgeBindings> | undefined)?.server, c.req.raw);
}
