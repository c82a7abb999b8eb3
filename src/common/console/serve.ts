// GET /console on either service: one HTML page with the stylesheet and scripts inlined (one
// request, no CDN, no external font: it works offline), built once at start-up from files
// embedded in the app (and in the compiled binaries). The page holds no data: it calls the
// service's own API with the token the user pastes, so the route itself is open.
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import css from "./console.css" with { type: "text" };
import core from "./core.client.js" with { type: "text" };

const CONSOLE_PATH = "/console";

export interface ConsolePage {
  /** "knowledge router" / "job orchestrator". */
  service: string;
  title: string;
  /** An authenticated GET that checks a pasted token. */
  probe: string;
  /** Where the token comes from, for the prompt. */
  tokenHint: string;
  /** The page's own script (uses `ui` from core). */
  script: string;
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
// A script body must not close its own tag.
const scriptSafe = (s: string) => s.replace(/<\/script/gi, "<\\/script");

function consoleHtml(page: ConsolePage): string {
  const cfg = JSON.stringify({ service: page.service, probe: page.probe, tokenHint: page.tokenHint });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<style>${css}</style>
</head>
<body>
<header>
<h1>${escapeHtml(page.title)}<small>console</small></h1>
<nav id="tabs" role="tablist" aria-label="Views" hidden></nav>
<div id="token-bar"></div>
</header>
<main>
<div id="error" class="error-box" role="alert" hidden></div>
<section id="login" class="panel" aria-labelledby="login-title" hidden>
<h2 id="login-title">Sign in</h2>
<p id="login-message" class="muted"></p>
<form id="login-form" class="row">
<label for="token-input" class="muted small">API token</label>
<input id="token-input" type="password" autocomplete="off" spellcheck="false" required>
<button class="primary" type="submit">Use token</button>
</form>
</section>
<div id="views" hidden></div>
</main>
<script>window.CONSOLE=${scriptSafe(cfg)};
${scriptSafe(core)}
${scriptSafe(page.script)}</script>
</body>
</html>
`;
}

/** In the OpenAPI documents so an SDK generator and a reader of /docs see it: an HTML page, no token. */
const consoleRoute = (page: ConsolePage) =>
  createRoute({
    method: "get",
    path: CONSOLE_PATH,
    operationId: "getConsole",
    tags: ["console"],
    summary: "The console page (HTML)",
    description:
      `The ${page.service}'s console for a browser: one HTML page with its stylesheet and scripts inlined (no other asset, no CDN, ` +
      "works offline). It holds no data: it asks for a token once, keeps it in sessionStorage and calls this API with it, so the page itself " +
      "needs none. Cached by ETag (If-None-Match answers 304).",
    security: [],
    request: { headers: z.object({ "if-none-match": z.string().optional() }) },
    responses: {
      200: {
        description: "The page",
        headers: z.object({ etag: z.string(), "cache-control": z.string(), "content-security-policy": z.string() }),
        content: { "text/html": { schema: z.string() } },
      },
      304: { description: "Not modified (If-None-Match matched the ETag)", headers: z.object({ etag: z.string() }) },
    },
  });

/** Registers GET /console (cached by ETag; no-cache so a new build shows at once). */
// biome-ignore lint/suspicious/noExplicitAny: any app, whatever its service's Env (Hono's generic is invariant)
export function registerConsole(app: OpenAPIHono<any>, page: ConsolePage): void {
  const html = consoleHtml(page);
  const etag = `"${Bun.hash(html).toString(36)}"`;
  app.openapi(consoleRoute(page), (c) => {
    if (c.req.header("if-none-match") === etag) return c.body(null, 304, { etag }) as never;
    return c.html(html, 200, {
      etag,
      "cache-control": "no-cache",
      // Only what the page itself carries, and calls to this origin.
      "content-security-policy":
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    }) as never;
  });
}
