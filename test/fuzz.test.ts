// A bounded fuzz suite over both OpenAPI documents, against the real processes (issue 14): every
// operation gets at least eight kinds of bad input — wrong types, missing fields, extra fields,
// nulls, ~5 MB strings, deep nesting, NUL and invalid UTF-8, wrong content types, hostile path
// parameters and query values — and (issue 37) every string field of a body the operation accepts
// holding a lone UTF-16 surrogate, a NUL or 5,000 characters. No answer may be a 5xx, none may take over 5 s, and every error
// body is in the documented shape (OpenAI's under /v1). A few hundred requests; runs in CI.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT, makeHub } from "./support/agent-mode";
import { type MainProcess, REPO, startMain, tempDir } from "./support/main-process";
import { KEY, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { ROUTER_TEST_TOKEN } from "./support/router-client";

type Json = any;
type Op = { method: string; path: string; op: Json };
type Attempt = { kind: string; url: string; init: RequestInit };

const BIG = "x".repeat(5 * 1024 * 1024);
const DEEP = (n: number) => "[".repeat(n) + "]".repeat(n);
const HOSTILE_IDS = ["..%2F..%2Fetc%2Fpasswd", "%00", "a".repeat(5000), "%F0%9F%92%A9", "'%20OR%201=1--", "%2e%2e", "%FF%FE", "%ED%A0%80"];

function operations(doc: Json): Op[] {
  const out: Op[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of ["get", "post", "put", "patch", "delete"]) if (item[method]) out.push({ method: method.toUpperCase(), path, op: item[method] });
  }
  return out;
}

const deref = (doc: Json, s: Json): Json =>
  s?.$ref
    ? deref(
        doc,
        s.$ref
          .split("/")
          .slice(1)
          .reduce((o: Json, k: string) => o[k], doc),
      )
    : s;

/** A minimal value of a schema: required members only. */
function sample(doc: Json, schema: Json, depth = 0): Json {
  const s = deref(doc, schema) ?? {};
  if (depth > 6) return null;
  if (s.enum) return s.enum[0];
  if (s.anyOf || s.oneOf) return sample(doc, (s.anyOf ?? s.oneOf)[0], depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type;
  switch (type) {
    case "object": {
      const o: Json = {};
      for (const k of s.required ?? []) o[k] = sample(doc, s.properties?.[k], depth + 1);
      return o;
    }
    case "array":
      return s.minItems ? [sample(doc, s.items, depth + 1)] : [];
    case "integer":
    case "number":
      return s.minimum ?? 1;
    case "boolean":
      return false;
    default:
      return "x";
  }
}

const wrongType = (doc: Json, s: Json): Json => {
  const t = deref(doc, s)?.type;
  const type = Array.isArray(t) ? t[0] : t;
  return type === "string" ? 12345 : type === "object" ? [1, 2] : type === "array" ? { not: "an array" } : `not-a-${type ?? "value"}`;
};

/**
 * A body each operation accepts, with its optional string fields filled (ids, users, metadata),
 * so a broken string in any of them reaches the code behind validation; else a minimal sample.
 */
const VALID: Record<string, Json> = {
  ingest: { content: "# Fuzz note\nA body.", title: "Fuzz", source: "fuzz", tags: ["fuzz"] },
  ingestBatch: { items: [{ content: "# Fuzz batch\nA body.", title: "Fuzz", source: "fuzz", tags: ["fuzz"] }] },
  search: { query: "fuzz" },
  getNotesBatch: { paths: ["ingest/none.md"] },
  createBrief: { query: "fuzz" },
  dispatch: { task: "Fuzz task", query: "fuzz", profile: "review" },
  createMarker: { type: "lesson", content: "Fuzz lesson", attrs: { source: "fuzz", session_id: "fuzz-session", title: "Fuzz", scope: "fuzz" } },
  createTick: { dry_run: true, as_of: "2026-01-01T00:00:00Z" },
  createJob: { task: "Fuzz task", profile: "review", session_id: "0190a0b0-c0d0-7e0f-8000-000000000001" },
  createChatCompletion: { model: AGENT, messages: [{ role: "user", content: "hi" }], metadata: { conversation_id: "fuzz-conversation" }, user: "fuzz-user" },
  createCompletion: { message: "hi", conversation_id: "fuzz-conversation-2", user: "fuzz-user" },
  createResponse: { model: AGENT, input: "hi", instructions: "Be brief.", metadata: { conversation_id: "fuzz-conversation-3" }, user: "fuzz-user" },
};

/** Strings a client can send that are not plain text: lone UTF-16 surrogates, NUL, an over-long id. */
const BROKEN_STRINGS: Array<[string, string]> = [
  ["lone high surrogate", "a\ud800b"],
  ["lone low surrogate", "\udc00"],
  ["NUL", "a\u0000b"],
  ["5,000 characters", "i".repeat(5000)],
];

/** Every string leaf of a value (paths as keys), plus the schema's top-level string properties. */
function stringPaths(doc: Json, schema: Json, body: Json): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  const walk = (v: Json, at: Array<string | number>) => {
    if (typeof v === "string") out.push(at);
    else if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, [...at, i]);
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
  };
  walk(body, []);
  for (const [k, s] of Object.entries<Json>(deref(doc, schema)?.properties ?? {})) {
    const t = deref(doc, s)?.type;
    if ((t === "string" || (Array.isArray(t) && t.includes("string"))) && !(k in (body ?? {}))) out.push([k]);
  }
  return out;
}

function withValue(body: Json, at: Array<string | number>, value: string): Json {
  const copy = structuredClone(body ?? {});
  let o = copy;
  for (const k of at.slice(0, -1)) o = o[k];
  o[at[at.length - 1]!] = value;
  return copy;
}

function attempts(doc: Json, base: string, { method, path, op }: Op): Attempt[] {
  const params: Json[] = (op.parameters ?? []).map((p: Json) => deref(doc, p));
  const fill = (id: string) => path.replace(/\{[^}]+\}/g, id);
  const pathOk = fill("0190a0b0-c0d0-7e0f-8000-000000000000");
  const bodySchema = deref(doc, op.requestBody?.content?.["application/json"]?.schema);
  const body = bodySchema ? (VALID[op.operationId] ?? sample(doc, bodySchema)) : undefined;
  const json = (b: unknown): RequestInit => ({ method, headers: { "content-type": "application/json" }, body: typeof b === "string" ? b : JSON.stringify(b) });
  const raw = (b: string | Uint8Array, type: string): RequestInit => ({ method, headers: { "content-type": type }, body: b });
  const noBody: RequestInit = { method };
  const out: Attempt[] = [];
  const add = (kind: string, p: string, init: RequestInit, query = "") => out.push({ kind, url: `${base}${p}${query}`, init });

  // Hostile path parameters.
  if (path.includes("{")) for (const id of HOSTILE_IDS) add(`path ${id.slice(0, 20)}`, fill(id), body === undefined ? noBody : json(body));
  // Query values of the wrong type, NUL, huge; and unknown ones.
  for (const p of params.filter((p) => p.in === "query")) {
    for (const v of ["-1", "not-a-number", "%00", "%FF", "%ED%A0%80", "1e309", "x".repeat(4000), `true&${p.name}=false`])
      add(`query ${p.name}=${v.slice(0, 12)}`, pathOk, body === undefined ? noBody : json(body), `?${p.name}=${v}`);
  }
  // Bad input any operation can be sent: odd query strings, headers and paths.
  const plain = body === undefined ? noBody : json(body);
  add("unknown query", pathOk, plain, "?__proto__=1&constructor=x");
  add("huge query", pathOk, plain, `?x=${"y".repeat(8000)}`);
  add("NUL query", pathOk, plain, "?q=%00&limit=%00");
  add("broken percent-encoding", pathOk, plain, "?q=%E0%A4%A&x=%");
  add("odd accept", pathOk, { ...plain, headers: { ...(plain.headers as Json), accept: "application/xml;q=2, */*;q=-1" } });
  add("trailing slash", `${pathOk}/`, plain);
  add("double slash", `/${pathOk}`, plain);
  add("bad bearer scheme", pathOk, { ...plain, headers: { ...(plain.headers as Json), "x-bad-auth": "1" } });
  // Hostile headers the routes read.
  add("bad Last-Event-ID", pathOk, { method, headers: { "last-event-id": "-1\u00e9", "x-conversation-id": "%00\u00ff" } as Json });

  if (method !== "GET" && method !== "DELETE") {
    const props = Object.entries<Json>(bodySchema?.properties ?? {});
    add("missing fields", pathOk, json({}));
    add("null body", pathOk, json("null"));
    add("array body", pathOk, json([body]));
    add("extra fields", pathOk, json({ ...(body ?? {}), unexpected: { deep: [1, 2] }, constructor: { prototype: 1 }, __proto__: { admin: true } }));
    add("all nulls", pathOk, json(Object.fromEntries(props.map(([k]) => [k, null]))));
    for (const [k, s] of props.slice(0, 12)) add(`wrong type ${k}`, pathOk, json({ ...(body ?? {}), [k]: wrongType(doc, s) }));
    const str = props.find(([, s]) => deref(doc, s)?.type === "string" || (Array.isArray(deref(doc, s)?.type) && deref(doc, s).type.includes("string")));
    if (str) {
      add(`5 MB ${str[0]}`, pathOk, json({ ...(body ?? {}), [str[0]]: BIG }));
      add(`NUL in ${str[0]}`, pathOk, json({ ...(body ?? {}), [str[0]]: "a\u0000b\u0000" }));
    }
    // Each broken string in each string field, nested ones included (metadata.conversation_id, messages[0].content).
    for (const at of stringPaths(doc, bodySchema, body))
      for (const [what, value] of BROKEN_STRINGS) add(`${what} in ${at.join(".")}`, pathOk, json(withValue(body, at, value)));
    add("deep nesting", pathOk, json(DEEP(100_000)));
    add("deep object", pathOk, json(`${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`));
    add("invalid UTF-8", pathOk, raw(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]), "application/json"));
    add("not JSON", pathOk, raw("{not json", "application/json"));
    add("text/plain", pathOk, raw(JSON.stringify(body ?? {}), "text/plain"));
    add("form", pathOk, raw("a=1&b=2", "application/x-www-form-urlencoded"));
    add(
      "multipart",
      pathOk,
      (() => {
        const f = new FormData();
        f.set("a", "1");
        return { method, body: f };
      })(),
    );
    add("5 MB JSON string body", pathOk, json(JSON.stringify(BIG)));
  }
  return out;
}

const isOpenAi = (path: string) => path === "/v1" || path.startsWith("/v1/");

async function probe(a: Attempt, auth: string, apiPath: string): Promise<string | undefined> {
  const started = performance.now();
  const headers = new Headers(a.init.headers);
  headers.set("authorization", headers.has("x-bad-auth") ? `Basic ${btoa("a:b")}` : `Bearer ${auth}`);
  let res: Response;
  try {
    res = await fetch(a.url, { ...a.init, headers, signal: AbortSignal.timeout(5_000) });
  } catch (err) {
    return `${a.kind}: no answer within 5 s (${(err as Error).name})`;
  }
  const ms = performance.now() - started;
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("text/event-stream")) {
    await res.body?.cancel();
    return res.status >= 500 ? `${a.kind}: ${res.status}` : undefined;
  }
  const text = await res.text();
  if (ms > 5_000) return `${a.kind}: took ${Math.round(ms)} ms`;
  if (res.status >= 500) return `${a.kind}: ${res.status} ${text.slice(0, 200)}`;
  if (res.status >= 400) {
    let body: Json;
    try {
      body = JSON.parse(text);
    } catch {
      return `${a.kind}: ${res.status} error body is not JSON: ${text.slice(0, 100)}`;
    }
    const e = body?.error;
    const ok = isOpenAi(apiPath)
      ? typeof e?.message === "string" && typeof e?.type === "string" && "code" in e
      : typeof e?.code === "string" && typeof e?.message === "string";
    if (!ok) return `${a.kind}: ${res.status} error body not in the documented shape: ${text.slice(0, 200)}`;
  }
  return undefined;
}

let router: MainProcess;
let orch: Orchestrator;
beforeAll(async () => {
  const home = tempDir("fuzz");
  orch = await startOrchestrator({
    env: { AUTH_FAILURE_LIMIT: "100000", SERVICE_HUB_URL: await makeHub(join(home, "hub")), HUB_AGENT: AGENT, SERVICE_CLONE_ROOT: join(home, "clones") },
  });
  router = await startMain(
    ["--only", "router", "--vault", join(home, "vault")],
    {
      KB_ROUTER_TOKEN: ROUTER_TEST_TOKEN,
      TICK_INTERVAL_SECONDS: "0",
      ORCHESTRATOR_URL: orch.url,
      SERVICE_API_KEY: KEY,
      // Hundreds of requests from one address: none of them a failed bearer.
      AUTH_FAILURE_LIMIT: "100000",
    },
    { expect: ["router"] },
  );
}, 60_000);
afterAll(async () => {
  await router?.stop();
  await orch?.stop();
});

for (const [name, file] of [
  ["router", "router.json"],
  ["orchestrator", "service.json"],
] as const) {
  const doc = JSON.parse(readFileSync(join(REPO, "openapi", file), "utf8"));
  describe(`fuzz: the ${name} API (openapi/${file})`, () => {
    for (const op of operations(doc)) {
      it(`${op.method} ${op.path}: no 5xx, no hang, errors in the documented shape`, async () => {
        const base = name === "router" ? router.routerUrl! : orch.url;
        const auth = name === "router" ? ROUTER_TEST_TOKEN : KEY;
        const list = attempts(doc, base, op);
        expect(list.length).toBeGreaterThanOrEqual(8);
        const failures: string[] = [];
        // A few at a time: bounded load on a shared machine.
        for (let i = 0; i < list.length; i += 4) {
          const found = await Promise.all(list.slice(i, i + 4).map((a) => probe(a, auth, op.path)));
          failures.push(...found.filter((f): f is string => f !== undefined));
        }
        if (failures.length) console.log(failures.join("\n"));
        expect(failures).toEqual([]);
      }, 120_000);
    }
  });
}
