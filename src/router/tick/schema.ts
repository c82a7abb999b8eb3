// The one declaration of a tick's input: POST /tick's body, the MCP tool's arguments, the
// client's input and the flags of the domain's TickRequest.
import { z } from "@hono/zod-openapi";
import { TICK_WAIT_MS } from "./limits";

export const TickRequest = z
  .object({
    dry_run: z.boolean().optional().openapi({ description: "compute everything, write nothing (the record lives in memory only)" }),
    no_ai: z.boolean().optional().openapi({ description: "rules only: no model call; the same vault and as_of give the same bytes" }),
    as_of: z.string().datetime({ offset: true }).optional().openapi({ description: "the time heat, TTLs and feed expiry are computed against (default: now)" }),
    wait: z
      .boolean()
      .optional()
      .openapi({ description: `answer when the tick has finished (up to ${TICK_WAIT_MS / 1000} s)` }),
  })
  .openapi("TickRequest");
export type TickRequest = z.infer<typeof TickRequest>;
