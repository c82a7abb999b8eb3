// Binding a sub-app to its port, with the one-line error a user needs when it is taken.
import type { Server } from "bun";

export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}

export interface ListenOptions {
  name: string;
  fetch: (req: Request, server: Server<undefined>) => Response | Promise<Response>;
  host: string;
  port: number;
  /** The variable that sets the port, named in the error. */
  portVar: string;
}

export function listen(opts: ListenOptions): Server<undefined> {
  try {
    return Bun.serve({
      hostname: opts.host,
      port: opts.port,
      fetch: opts.fetch,
      // An agent turn or an SSE stream can be silent for long; routes that stream also
      // send keep-alives. 255 s is Bun's maximum.
      idleTimeout: 255,
      // Our own body limit (MAX_BODY_BYTES) answers 413 in the JSON shape; keep Bun's higher.
      maxRequestBodySize: 2 ** 31,
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "EADDRINUSE" || /in use/i.test(String((err as Error).message))) {
      throw new StartupError(`${opts.name}: port ${opts.port} on ${opts.host} is already in use; set ${opts.portVar} to another port`);
    }
    if (code === "EADDRNOTAVAIL" || code === "EACCES") {
      throw new StartupError(`${opts.name}: cannot listen on ${opts.host}:${opts.port} (${code})`);
    }
    throw err;
  }
}

export const isLoopback = (host: string): boolean => host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
