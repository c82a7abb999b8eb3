// The factory both sub-apps are built with: an OpenAPIHono whose validation failures
// become the shared 400 body, plus the served documents (/openapi.json, /docs).
import { type Hook, OpenAPIHono } from "@hono/zod-openapi";
import type { Env, MiddlewareHandler } from "hono";
import type { ZodError } from "zod";
import { createErrorHandler, createNotFoundHandler, isOpenAiPath, type OpenAiPathTest, renderError } from "./error-handler";
import { type EdgeOptions, installServiceEdge } from "./http/edge";
import { describeZodError, illFormedString } from "./validation";

export interface ApiInfo {
  title: string;
  version: string;
  description: string;
  /** The service's default local URL (its default port), listed as the document's server. */
  server: string;
  /**
   * The service's API guide (markdown, see applyGuide): the prose a reader of /docs needs beyond
   * the schemas, kept beside the routes and merged into the operations' descriptions.
   */
  guide?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: one hook for every route, whatever its input and output types
function validationHook<E extends Env>(openAi: OpenAiPathTest = isOpenAiPath): Hook<any, E, any, any> {
  return (result, c) => {
    if (!result.success) {
      const { message, details } = describeZodError(result.error as ZodError);
      return renderError(c, 400, "invalid_request", message, details, openAi);
    }
    // Valid by its schema, but a string no file, header or store can hold: refused here, by field.
    const broken = illFormedString(result.data);
    if (broken) return renderError(c, 400, "invalid_request", `invalid request: ${broken.path}: ${broken.message}`, [broken], openAi);
  };
}

/**
 * The app, its error handler and 404, the bearer scheme, and (given `edge`) the edge every
 * service runs: request id, access log, auth, body limit, bindings (http/edge.ts).
 */
export function createOpenApiApp<E extends Env>(openAi: OpenAiPathTest = isOpenAiPath, edge?: Omit<EdgeOptions, "openAi">): OpenAPIHono<E> {
  const app = new OpenAPIHono<E>({ defaultHook: validationHook<E>(openAi) });
  app.onError(createErrorHandler(openAi));
  if (edge) installServiceEdge(app, { ...edge, openAi });
  app.notFound(createNotFoundHandler(openAi));
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "Authorization: Bearer <token>",
  });
  return app;
}

/** The OpenAPI 3.1 document of an app, as `bun run openapi` writes it and /openapi.json serves it. */
// biome-ignore lint/suspicious/noExplicitAny: any app, whatever its service's Env (Hono's generic is invariant)
export function openApiDocument(app: OpenAPIHono<any>, info: ApiInfo): Record<string, unknown> {
  const doc = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.server, description: "the default local address" }],
    security: [{ bearer: [] }],
  }) as unknown as OpenApiDoc;
  inlineRequestSchemas(doc);
  if (info.guide) applyGuide(doc as unknown as GuidedDoc, info.guide);
  return doc as unknown as Record<string, unknown>;
}

type GuidedDoc = { info: { description?: string }; paths?: Record<string, Record<string, { operationId?: string; description?: string }>> };

/**
 * Merges a guide into the document. The guide is markdown (a leading `<!-- … -->` comment is for
 * its editors and dropped): what comes before the first `## `
 * heading is appended to the document's description; each `## <operationId>` section is appended
 * to that operation's description (its `###` headings and below stay inside it). A section naming
 * no operation is an error, so the guide cannot drift from the routes unnoticed.
 */
export function applyGuide(doc: GuidedDoc, guide: string): void {
  const ops = new Map<string, { description?: string }>();
  for (const item of Object.values(doc.paths ?? {})) for (const op of Object.values(item)) if (op?.operationId) ops.set(op.operationId, op);
  const append = (base: string | undefined, more: string) => (base ? `${base}\n\n${more}` : more);
  const [preamble = "", ...sections] = guide.replace(/^<!--[\s\S]*?-->\s*/, "").split(/^## /m);
  if (preamble.trim()) doc.info.description = append(doc.info.description, preamble.trim());
  for (const section of sections) {
    const newline = section.indexOf("\n");
    const id = (newline < 0 ? section : section.slice(0, newline)).trim();
    const body = newline < 0 ? "" : section.slice(newline + 1).trim();
    const op = ops.get(id);
    if (!op) throw new Error(`API guide: section "## ${id}" names no operation (known: ${[...ops.keys()].join(", ")})`);
    if (body) op.description = append(op.description, body);
  }
}

type Schema = Record<string, unknown>;
interface OpenApiDoc {
  paths?: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
  components?: { schemas?: Record<string, Schema> };
}

/**
 * Moves each named schema that is only ever a request body into that body, titled with its name.
 * openapi-typescript (default options) types a property with a `default` as required everywhere
 * but in request bodies and parameters, so `stream`, `limit`, `wait`, … stay optional for SDK
 * callers only when the schema sits inline in the request body.
 */
function inlineRequestSchemas(doc: OpenApiDoc): void {
  const schemas = doc.components?.schemas ?? {};
  const bodies = Object.values(doc.paths ?? {}).flatMap((item) => Object.values(item).flatMap((op) => Object.values(op?.requestBody?.content ?? {})));
  const refName = (schema?: Schema) => (typeof schema?.$ref === "string" ? schema.$ref.replace("#/components/schemas/", "") : undefined);
  const text = JSON.stringify(doc);
  for (const name of new Set(bodies.map((b) => refName(b.schema)).filter((n): n is string => !!n && n in schemas))) {
    const uses = text.split(`"#/components/schemas/${name}"`).length - 1;
    const inBodies = bodies.filter((b) => refName(b.schema) === name);
    if (uses !== inBodies.length) continue; // also used elsewhere: keep it shared
    for (const body of inBodies) body.schema = { title: name, ...schemas[name] };
    delete schemas[name];
  }
}

/**
 * Serves /openapi.json and /docs. Registered last so the document holds every route;
 * computed once on first request.
 */
// biome-ignore lint/suspicious/noExplicitAny: any app, whatever its service's Env (Hono's generic is invariant)
export function serveDocs(app: OpenAPIHono<any>, info: ApiInfo): void {
  let doc: Record<string, unknown> | undefined;
  app.get("/openapi.json", (c) => {
    doc ??= openApiDocument(app, info);
    return c.json(doc);
  });
  // The reference page's renderer loads with its first request (few processes ever serve it).
  let page: MiddlewareHandler | undefined;
  app.get("/docs", async (c, next) => {
    page ??= (await import("@scalar/hono-api-reference")).Scalar({ url: "/openapi.json", pageTitle: info.title });
    return page(c, next);
  });
}
