// GET /health, the same route for both services (liveness; no token needed).
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { VERSION } from "./version";

export const Health = z
  .object({
    status: z.literal("ok"),
    service: z.string().openapi({ example: "knowledge-router" }),
    version: z.string().openapi({ example: VERSION }),
  })
  .openapi("Health");
export type Health = z.infer<typeof Health>;

const route = createRoute({
  method: "get",
  path: "/health",
  operationId: "getHealth",
  tags: ["health"],
  summary: "Liveness",
  security: [],
  responses: { 200: { description: "The service is up", content: { "application/json": { schema: Health } } } },
});

// biome-ignore lint/suspicious/noExplicitAny: any app, whatever its service's Env (Hono's generic is invariant)
export function registerHealth(app: OpenAPIHono<any>, service: string): void {
  // The body never changes: serialised once, not per request (the /health benchmark's hot path).
  const body = JSON.stringify({ status: "ok", service, version: VERSION } satisfies z.infer<typeof Health>);
  app.openapi(route, (c) => c.body(body, 200, { "content-type": "application/json" }) as never);
}
