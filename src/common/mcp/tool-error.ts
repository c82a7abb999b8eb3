// The MCP edge's one mapping of domain errors (domain-error.ts): a tool error (isError) whose
// text is the code and the message, which is what a model reads and can act on.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { DomainError } from "../domain-error";
import { isStorageFull, storageFullError } from "../storage";

/** The tool error for a domain error; undefined for anything else (the server's own fault). */
export function toolErrorOf(err: unknown): CallToolResult | undefined {
  if (!(err instanceof DomainError)) return isStorageFull(err) ? toolErrorOf(storageFullError(err)) : undefined;
  return { isError: true, content: [{ type: "text", text: `${err.code}: ${err.message}` }] };
}
