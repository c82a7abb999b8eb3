// A small HTTP helper for router suites: calls with the test token, JSON in and out.
export const ROUTER_TEST_TOKEN = "router-api-token";
const TOKEN = ROUTER_TEST_TOKEN;

type Json = Record<string, any>;

export function routerClient(base: () => string) {
  const call = async (path: string, body?: unknown, init: RequestInit = {}) => {
    const res = await fetch(`${base()}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      ...init,
    });
    const text = await res.text();
    let json: Json = {};
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, body: json, text, headers: res.headers };
  };
  return {
    call,
    ingest: (content: string, tags: string[] = [], extra: Json = {}) => call("/ingest", { content, tags, ...extra }),
    search: (query: string, limit?: number) => call("/search", limit === undefined ? { query } : { query, limit }),
  };
}
