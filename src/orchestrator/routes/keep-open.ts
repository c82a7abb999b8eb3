// Bun closes a connection idle for idleTimeout seconds (255 at most); a request that waits for
// a job or streams MCP events can be silent far longer (DESIGN, Known pitfalls). Hono hands
// Bun's server in as c.env, which can lift the timeout for one request.
import type { Context } from "hono";

export function keepOpen(c: Context): void {
  const server = c.env as { timeout?: (req: Request, seconds: number) => void } | undefined;
  server?.timeout?.(c.req.raw, 0);
}
