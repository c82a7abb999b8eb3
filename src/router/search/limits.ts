// What a search may ask for (POST /search, /brief and /dispatch, and the MCP search and brief
// tools): the longest query and how many hits.

/** Longest query, in characters. */
export const QUERY_MAX_CHARS = 2000;

/** Hits a search returns: this many unless asked, at most max. */
export const SEARCH_LIMIT = { default: 10, max: 100 } as const;
