// How a router MCP tool answers: the domain call's value as JSON text (and as
// structuredContent when it is an object); a domain error as a tool error (isError) carrying
// its code and message (common/mcp/tool-error.ts), as MCP clients expect.
import { toolErrorOf } from "../../common/mcp/tool-error";

type ToolResult = { content: Array<{ type: "text"; text: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

export async function answer(fn: () => Promise<unknown>): Promise<ToolResult> {
  try {
    const value = await fn();
    const structured = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], ...(structured ? { structuredContent: structured } : {}) };
  } catch (err) {
    const failed = toolErrorOf(err);
    if (failed) return failed as ToolResult;
    // Anything else is still the tool's error, not the session's: the model reads what failed.
    const code = (err as { code?: string }).code;
    return { content: [{ type: "text", text: `${code ? `${code}: ` : ""}${(err as Error).message}` }], isError: true };
  }
}
