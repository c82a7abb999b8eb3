// The router built in-process on a temp vault (config from an env map, as main.ts builds it),
// called through its HTTP surface with app.request — for suites that arrange vault states by
// hand and want many small routers quickly. The scheduler is off unless the env turns it on.
import { afterEach } from "bun:test";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadRouterConfig } from "../../src/router/config";
import { createRouterRuntime, type RouterRuntime } from "../../src/router/runtime";
import { tempDir } from "./main-process";
import { ROUTER_TEST_TOKEN } from "./router-client";

type Json = Record<string, any>;

export interface TestRouter {
  runtime: RouterRuntime;
  vault: string;
  home: string;
  call(path: string, body?: unknown, init?: RequestInit): Promise<{ status: number; body: Json; text: string; headers: Headers }>;
  close(): Promise<void>;
}

export async function startTestRouter(env: Record<string, string> = {}, opts: { vault?: string } = {}): Promise<TestRouter> {
  const home = tempDir("router-home");
  const vault = opts.vault ?? join(tempDir("router-vault"), "vault");
  const config = loadRouterConfig({ KB_ROUTER_TOKEN: ROUTER_TEST_TOKEN, TICK_INTERVAL_SECONDS: "0", ...env }, home, { vault });
  const runtime = await createRouterRuntime(config);
  return {
    runtime,
    vault,
    home,
    async call(path, body, init = {}) {
      const res = await runtime.app.request(path, {
        method: body === undefined ? "GET" : "POST",
        ...init,
        headers: { authorization: `Bearer ${ROUTER_TEST_TOKEN}`, "content-type": "application/json", ...(init.headers as Record<string, string> | undefined) },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let json: Json = {};
      try {
        json = JSON.parse(text);
      } catch {}
      return { status: res.status, body: json, text, headers: res.headers };
    },
    close: () => runtime.close(),
  };
}

/**
 * A `router(env, vault?)` factory for a suite: every router it starts is closed after each
 * test. Call once at the top level of a test file.
 */
export function useTestRouters(): (env?: Record<string, string>, vault?: string) => Promise<TestRouter> {
  const open: TestRouter[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });
  return async (env = {}, vault) => {
    const r = await startTestRouter(env, { vault });
    open.push(r);
    return r;
  };
}

/** Writes a vault file (folders made as needed), optionally with a given mtime. */
export function putFile(vault: string, rel: string, content: string, mtime?: Date): void {
  const abs = join(vault, rel);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  if (mtime) utimesSync(abs, mtime, mtime);
}
