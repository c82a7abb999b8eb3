// The router app's types: what its handlers reach through c.env.deps, and the app they are
// registered on. In a module of their own so route files need not import app.ts, which imports them.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { EdgeBindings } from "../common/http/edge";
import type { BriefDeps } from "./brief/brief";
import type { RouterConfig } from "./config";
import type { DispatchDeps } from "./dispatch/dispatch";
import type { FeedDeps } from "./feed/feed";
import type { DeepDeps } from "./health/deep";
import type { PipelineDeps } from "./health/pipeline";
import type { IndexStore } from "./index/types";
import type { IngestDeps } from "./ingest/ingest";
import type { MarkerDeps } from "./markers/marker";
import type { NotesDeps } from "./notes/file";
import type { SignalHub } from "./signals/hub";
import type { TickQueue } from "./tick/queue";

export interface RouterDeps {
  config: RouterConfig;
  index: IndexStore;
  ingest: IngestDeps;
  /** Search and brief (brief adds the chat endpoint when one is configured). */
  search: BriefDeps;
  dispatch: DispatchDeps;
  markers: MarkerDeps;
  /** Reading notes by path, their links, recent changes. */
  notes: NotesDeps;
  ticks: TickQueue;
  signals: SignalHub;
  feed: FeedDeps;
  pipeline: PipelineDeps;
  deep: DeepDeps;
}

export type RouterEnv = { Bindings: EdgeBindings & { deps: RouterDeps } };
export type RouterApp = OpenAPIHono<RouterEnv>;
