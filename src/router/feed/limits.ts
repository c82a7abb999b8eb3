/** The range a feed's inject_blocks budget may take (FEED_MAX_CHARS, GET /feed and the MCP feed tool's max_chars). */
export const FEED_CHARS = { min: 200, max: 200_000 } as const;
