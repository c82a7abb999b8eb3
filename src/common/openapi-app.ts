// The factory both sub-apps are built with: an OpenAPIHono whose validation failures
// become the shared 400 body, plus the served documents (/openapi.json, /docs).
import { OpenAPIHono, type Hook } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { Env } from "hono";
import type { ZodError } from "zod";
import { createErrorHandler, createNotFoundHandler, renderError, type OpenAiPathTest, isOpenAiPath } from "./error-handler";
import { describeZodError } from "./validation";
import { installServiceEdge, type EdgeOptions } from "./middleware/stack";

export interface ApiInfo {
  title: string;
  version: string;
  description: string;
  /** The service's default local URL (its default port), listed as the document's server. */
  server: string;
}

// biome-ignore lint/suspicious/noExplicitAny: one hook for every route, whatever its input and output types
function validationHook<E extends Env>(openAi: OpenAiPathTest = isOpenAiPath): Hook<any, E, any, any> {
  return (result, c) => {
    if (!result.success) {
      const { message, details } = describeZodError(result.error as ZodError);
      return renderError(c, 400, "invalid_request", message, details, openAi);
    }
  };
}

/**
 * The app, its error handler and 404, the bearer scheme, and (given `edge`) the edge every
 * service runs: request id, access log, auth, body limit, bindings (middleware/stack.ts).
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
  return doc as unknown as Record<string, unknown>;
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
  const bodies = Object.values(doc.paths ?? {}).flatMap((item) =>
    Object.values(item).flatMap((op) => Object.values(op?.requestBody?.content ?? {})),
  );
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
  app.get("/docs", Scalar({ url: "/openapi.json", pageTitle: info.title }));
}
