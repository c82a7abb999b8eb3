// The router's MCP tools: search, brief, ingest, marker, feed, tick (and get, multi_get, recent,
// context: notes-tools.ts) — the same domain calls
// the HTTP routes make, answered as JSON text (and as structuredContent). A domain error becomes a tool error
// (isError) carrying its message, as MCP clients expect.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { VERSION } from "../../common/version";
import type { RouterDeps } from "../app-types";
import { brief } from "../brief/brief";
import { buildFeed, FEED_CHARS } from "../feed/feed";
import { MATCH_MODES } from "../index/types";
import { ingest } from "../ingest/ingest";
import { INGEST_SOURCE_MAX_CHARS, INGEST_TAGS, INGEST_TITLE_MAX_CHARS } from "../ingest/limits";
import { markerKey, recordMarker, requireMarkerType } from "../markers/marker";
import { MARKER_KEY_MAX_CHARS, MARKER_MAX_CHARS, MARKER_TYPE_SPELLINGS } from "../markers/types";
import { QUERY_MAX_CHARS, SEARCH_LIMIT } from "../search/limits";
import { search } from "../search/search";
import { answer } from "./answer";
import { registerNoteTools } from "./notes-tools";

export function createRouterMcpServer(deps: RouterDeps): McpServer {
  const server = new McpServer({ name: "brain-stack-router", version: VERSION });

  server.registerTool(
    "search",
    {
      description:
        "Federated search over the knowledge vault. Query syntax: words, \"quoted phrases\", tag:x, producer:x. Each hit's score is 0–1 relative to the best hit; coverage is the share of the query's words it holds.",
      inputSchema: {
        query: z.string().min(1).max(QUERY_MAX_CHARS),
        limit: z.number().int().min(1).max(SEARCH_LIMIT.max).default(SEARCH_LIMIT.default),
        explain: z.boolean().default(false).describe("add each hit's BM25, vector, fused and rerank scores and ranks"),
        rerank: z.boolean().default(true).describe("false skips the configured reranker"),
        match: z
          .enum(MATCH_MODES)
          .default("any")
          .describe("any: every word counts, notes holding every word first; all: only notes holding every word and phrase"),
      },
      annotations: { readOnlyHint: true },
    },
    ({ query, limit, explain, rerank, match }) => answer(() => search(deps.search, query, limit, { explain, rerank, match })),
  );

  server.registerTool(
    "brief",
    {
      description: "Search the vault and synthesize a cited digest (model-written when one is configured, else extractive).",
      inputSchema: { query: z.string().min(1).max(QUERY_MAX_CHARS) },
      annotations: { readOnlyHint: true },
    },
    ({ query }) => answer(() => brief(deps.search, query)),
  );

  server.registerTool(
    "ingest",
    {
      description: "Add content to the vault: classified, written as markdown with frontmatter, indexed at once.",
      inputSchema: {
        content: z.string().min(1),
        tags: z.array(z.string().min(1).max(INGEST_TAGS.maxChars)).max(INGEST_TAGS.max).default([]),
        title: z.string().max(INGEST_TITLE_MAX_CHARS).optional(),
        source: z.string().max(INGEST_SOURCE_MAX_CHARS).optional(),
      },
    },
    (args) => answer(() => ingest(deps.ingest, { ...args, source: args.source?.trim() || "mcp" })),
  );

  server.registerTool(
    "marker",
    {
      description: `Record a marker: lesson, milestone, signal or decision (content at most ${MARKER_MAX_CHARS} characters). Idempotent by idempotency_key, else by the arguments' hash.`,
      inputSchema: {
        type: z.enum(MARKER_TYPE_SPELLINGS),
        content: z.string().min(1),
        attrs: z.record(z.string(), z.union([z.string(), z.number()])).default({}),
        idempotency_key: z.string().min(1).max(MARKER_KEY_MAX_CHARS).optional(),
      },
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
      inputSchema: { max_chars: z.number().int().min(FEED_CHARS.min).max(FEED_CHARS.max).optional() },
      annotations: { readOnlyHint: true },
    },
    ({ max_chars }) => answer(() => buildFeed(deps.feed, { maxChars: max_chars })),
  );

  server.registerTool(
    "tick",
    {
      description: "Enqueue a tick (harvest inline markers, cluster arcs, sweep signals, write the feed, refresh the index). wait: return the finished record.",
      inputSchema: { dry_run: z.boolean().default(false), no_ai: z.boolean().default(false), wait: z.boolean().default(false) },
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
