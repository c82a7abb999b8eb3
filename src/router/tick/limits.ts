/** Longest anyone waits for a tick (POST /tick?wait, the MCP tick tool); past it they get the record so far. */
export const TICK_WAIT_MS = 120_000;
