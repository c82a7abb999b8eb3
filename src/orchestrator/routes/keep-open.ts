// Bun closes a connection idle for idleTimeout seconds (255 at most); a request that waits for
// a job or streams MCP events can be silent far longer (DESIGN, Known pitfalls). The edge hands
// Bun's server in as c.env.server, which can lift the timeout for one request.
import type { Context } from "hono";
import type { EdgeBindings } from "../../common/middleware/stack";

export function keepOpen(c: Context): void {
  (c.env as Partial<EdgeBindings> | undefined)?.server?.timeout?.(c.req.raw, 0);
}
