// GET /health, the same route for both services (liveness; no token needed).
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { VERSION } from "./version";

export const HealthResponse = z
  .object({
    status: z.literal("ok"),
    service: z.string().openapi({ example: "knowledge-router" }),
    version: z.string().openapi({ example: VERSION }),
  })
  .openapi("Health");

const route = createRoute({
  method: "get",
  path: "/health",
  tags: ["health"],
  summary: "Liveness",
  security: [],
  responses: { 200: { description: "The service is up", content: { "application/json": { schema: HealthResponse } } } },
});

export function registerHealth(app: OpenAPIHono<any>, service: string): void {
  const body = { status: "ok" as const, service, version: VERSION };
  app.openapi(route, (c) => c.json(body, 200));
}
