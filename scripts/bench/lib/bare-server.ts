// The baseline for http.ts: a bare Bun.serve answering GET /health with a fixed JSON body,
// no middleware. PORT and BODY come from the environment.
const port = Number(process.env.PORT);
const body = process.env.BODY ?? JSON.stringify({ status: "ok", service: "knowledge-router", version: "0.1.0" });

Bun.serve({
  hostname: "127.0.0.1",
  port,
  routes: {
    "/health": { GET: () => new Response(body, { headers: { "content-type": "application/json" } }) },
  },
  fetch: () => new Response("not found", { status: 404 }),
});
