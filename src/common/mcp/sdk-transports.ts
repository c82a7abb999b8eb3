// What the MCP HTTP layer (http.ts) needs of the SDK at run time, in one module it imports on
// the first MCP request.
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
export { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
export { SseServerTransport } from "./sse-transport";
