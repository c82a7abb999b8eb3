// The one declaration of the feed's input: GET /feed's query, the MCP tool's arguments and the
// domain's options (a query string's number is coerced; a JSON number passes as it is).
import { z } from "@hono/zod-openapi";
import { FEED_CHARS } from "./limits";

export const FeedRequest = z.object({
  max_chars: z.coerce
    .number()
    .int()
    .min(FEED_CHARS.min)
    .max(FEED_CHARS.max)
    .optional()
    .openapi({ description: "budget for inject_blocks (default FEED_MAX_CHARS)" }),
});
export type FeedRequest = z.infer<typeof FeedRequest>;
