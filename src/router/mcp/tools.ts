// The router's MCP tools: search, brief, ingest, marker, feed, tick (and get, multi_get, recent,
// context: notes-tools.ts) — the same domain calls
// the HTTP routes make, answered as JSON text (and as structuredContent). A domain error becomes a tool error
// (isError) carrying its message, as MCP clients expect.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { VERSION } from "../../common/version";
import type { RouterDeps } from "../app-types";
import { brief } from "../brief/brief";
import { BriefRequest } from "../brief/schema";
import { buildFeed } from "../feed/feed";
import { FeedRequest } from "../feed/schema";
import { ingest } from "../ingest/ingest";
import { IngestRequest } from "../ingest/schema";
import { markerKey, recordMarker, requireMarkerType } from "../markers/marker";
import { MarkerToolRequest } from "../markers/schema";
import { MARKER_MAX_CHARS } from "../markers/types";
import { SearchRequest } from "../search/schema";
import { search } from "../search/search";
import { TickRequest } from "../tick/schema";
import { answer } from "./answer";
import { registerNoteTools } from "./notes-tools";

export function createRouterMcpServer(deps: RouterDeps): McpServer {
  const server = new McpServer({ name: "brain-stack-router", version: VERSION });

  server.registerTool(
    "search",
    {
      description:
        "Federated search over the knowledge vault. Query syntax: words, \"quoted phrases\", tag:x, producer:x. Each hit's score is 0–1 relative to the best hit; coverage is the share of the query's words it holds.",
      // The request's own fields; the words an agent reads are its own (OpenAPI descriptions do not reach MCP's JSON Schema).
      inputSchema: {
        ...SearchRequest.shape,
        explain: SearchRequest.shape.explain.describe("add each hit's BM25, vector, fused and rerank scores and ranks"),
        rerank: SearchRequest.shape.rerank.describe("false skips the configured reranker"),
        match: SearchRequest.shape.match.describe(
          "any: every word counts, notes holding more of the words, closer together, rank higher; all: only notes holding every word and phrase",
        ),
      },
      annotations: { readOnlyHint: true },
    },
    ({ query, limit, explain, rerank, match }) => answer(() => search(deps.search, query, limit, { explain, rerank, match })),
  );

  server.registerTool(
    "brief",
    {
      description: "Search the vault and synthesize a cited digest (model-written when one is configured, else extractive).",
      inputSchema: { query: BriefRequest.shape.query },
      annotations: { readOnlyHint: true },
    },
    ({ query }) => answer(() => brief(deps.search, query)),
  );

  server.registerTool(
    "ingest",
    {
      description: "Add content to the vault: classified, written as markdown with frontmatter, indexed at once.",
      inputSchema: IngestRequest.shape,
    },
    (args) => answer(() => ingest(deps.ingest, { ...args, source: args.source?.trim() || "mcp" })),
  );

  server.registerTool(
    "marker",
    {
      description: `Record a marker: lesson, milestone, signal or decision (content at most ${MARKER_MAX_CHARS} characters). Idempotent by idempotency_key, else by the arguments' hash.`,
      inputSchema: MarkerToolRequest.shape,
    },
    ({ type, content, attrs, idempotency_key }) =>
      answer(async () => {
        const key = markerKey(idempotency_key, { type, content, attrs });
        const { record, replayed } = await recordMarker(deps.markers, { type: requireMarkerType(type), content, attrs }, key, {
          origin: "mcp",
          defaultSource: "mcp",
        });
        return { ...record, replayed };
      }),
  );

  server.registerTool(
    "feed",
    {
      description: "The session-start feed: hot arcs, inject blocks by priority, recent lessons and live signals.",
      inputSchema: FeedRequest.shape,
      annotations: { readOnlyHint: true },
    },
    (req) => answer(() => buildFeed(deps.feed, req)),
  );

  server.registerTool(
    "tick",
    {
      description: "Enqueue a tick (harvest inline markers, cluster arcs, sweep signals, write the feed, refresh the index). wait: return the finished record.",
      inputSchema: TickRequest.pick({ dry_run: true, no_ai: true, wait: true }).shape,
    },
    ({ dry_run, no_ai, wait }) =>
      answer(async () => {
        const record = await deps.ticks.enqueue({ dry_run, no_ai, trigger: "mcp" });
        return wait ? ((await deps.ticks.wait(record.tick_id)) ?? record) : record;
      }),
  );

  registerNoteTools(server, deps);
  return server;
}
