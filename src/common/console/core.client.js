// The console's shared client code (both services): the token (sessionStorage only), API calls
// with Authorization, SSE read with fetch (EventSource cannot send the header), tabs, DOM helpers.
"use strict";
const ui = (() => {
  const cfg = window.CONSOLE;
  const KEY = `brain-stack:${cfg.service}:token`;
  const $ = (id) => document.getElementById(id);
  const token = () => sessionStorage.getItem(KEY) || "";

  /** h("div", {class: "x", onclick: f}, "text", child): text is always text, never HTML. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "html") el.innerHTML = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
    return el;
  }

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  function showError(err) {
    const box = $("error");
    if (!err) {
      box.hidden = true;
      return;
    }
    box.textContent = err.message || String(err);
    box.hidden = false;
  }

  async function request(path, opts = {}) {
    const headers = { authorization: `Bearer ${token()}`, ...(opts.headers || {}) };
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(path, {
      method: opts.method || "GET",
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
    });
    if (res.ok) return res;
    let code = `http_${res.status}`;
    let message = `${res.status} ${res.statusText}`;
    try {
      const body = await res.json();
      if (body?.error) ({ code, message } = { code: body.error.code || code, message: body.error.message || message });
    } catch {}
    if (res.status === 401) {
      login(`The token was refused (${message}). Paste a valid one.`);
    }
    throw new ApiError(res.status, code, message);
  }

  const api = async (path, opts) => (await request(path, opts)).json();

  /** Reads a server-sent event stream; resolves when the server ends it. onEvent({id, event, data}). */
  async function stream(path, { lastEventId, signal, onEvent }) {
    const res = await request(path, { headers: { accept: "text/event-stream", ...(lastEventId ? { "last-event-id": String(lastEventId) } : {}) }, signal });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    let ev = { data: [] };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += value;
        for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
          const line = buf.slice(0, nl).replace(/\r$/, "");
          buf = buf.slice(nl + 1);
          if (line === "") {
            if (ev.data.length > 0) onEvent({ id: ev.id, event: ev.event || "message", data: ev.data.join("\n") });
            ev = { data: [] };
          } else if (!line.startsWith(":")) {
            const i = line.indexOf(":");
            const field = i < 0 ? line : line.slice(0, i);
            const val = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
            if (field === "data") ev.data.push(val);
            else if (field === "event") ev.event = val;
            else if (field === "id") ev.id = val;
          }
        }
      }
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    }
  }

  /** Escapes a snippet, then lets its <mark> tags (the server's match markers) through. */
  const marked = (s) =>
    String(s)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/&lt;mark&gt;/g, "<mark>")
      .replace(/&lt;\/mark&gt;/g, "</mark>");

  const fmt = {
    time: (iso) => (iso ? new Date(iso).toLocaleString() : "—"),
    ago(iso) {
      if (!iso) return "—";
      const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
      if (s < 60) return `${Math.max(0, s)}s ago`;
      if (s < 3600) return `${Math.round(s / 60)}m ago`;
      if (s < 86400) return `${Math.round(s / 3600)}h ago`;
      return `${Math.round(s / 86400)}d ago`;
    },
    ms(n) {
      if (n === null || n === undefined) return "—";
      const s = Math.round(n / 1000);
      return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
    },
    usd: (n) => (typeof n === "number" ? `$${n.toFixed(4)}` : "—"),
    num: (n) => (typeof n === "number" ? n.toLocaleString("en-US") : "—"),
  };

  // --- tabs
  let views = [];
  function select(id) {
    for (const v of views) {
      const on = v.id === id;
      v.button.setAttribute("aria-selected", String(on));
      v.button.tabIndex = on ? 0 : -1;
      v.section.hidden = !on;
      if (on && v.show) v.show();
    }
    history.replaceState(null, "", `#${id}`);
  }
  function tabs(defs) {
    const nav = $("tabs");
    const host = $("views");
    views = defs.map((d) => {
      const button = h("button", { role: "tab", id: `tab-${d.id}`, "aria-controls": `view-${d.id}`, type: "button", onclick: () => select(d.id) }, d.label);
      const section = h("section", { id: `view-${d.id}`, role: "tabpanel", "aria-labelledby": `tab-${d.id}`, hidden: true });
      nav.append(button);
      host.append(section);
      d.render(section);
      return { ...d, button, section };
    });
    nav.addEventListener("keydown", (e) => {
      const i = views.findIndex((v) => v.button === document.activeElement);
      if (i < 0 || (e.key !== "ArrowRight" && e.key !== "ArrowLeft")) return;
      const next = views[(i + (e.key === "ArrowRight" ? 1 : views.length - 1)) % views.length];
      next.button.focus();
      select(next.id);
    });
    const wanted = location.hash.slice(1);
    select(views.some((v) => v.id === wanted) ? wanted : views[0].id);
  }

  // --- the token: pasted once per browser tab, kept in sessionStorage only
  let started = false;
  let onStart = () => {};
  function tokenBar() {
    const bar = $("token-bar");
    bar.replaceChildren();
    if (token()) {
      bar.append(
        h("span", { class: "hide-narrow" }, "token set"),
        h(
          "button",
          {
            type: "button",
            onclick: () => {
              sessionStorage.removeItem(KEY);
              location.reload();
            },
          },
          "Forget token",
        ),
      );
    }
  }
  function login(message) {
    const box = $("login");
    $("views").hidden = true;
    $("tabs").hidden = true;
    box.hidden = false;
    $("login-message").textContent = message || `Paste an API token for this ${cfg.service} (${cfg.tokenHint}). It stays in this browser tab only.`;
    $("token-input").focus();
  }
  function boot(start) {
    onStart = start;
    $("login-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const value = $("token-input").value.trim();
      if (!value) return;
      sessionStorage.setItem(KEY, value);
      try {
        await api(cfg.probe);
      } catch (err) {
        if (err.status !== 401) login(`Could not check the token: ${err.message}`);
        return;
      }
      $("token-input").value = "";
      begin();
    });
    if (token()) begin();
    else login();
  }
  function begin() {
    $("login").hidden = true;
    $("views").hidden = false;
    $("tabs").hidden = false;
    tokenBar();
    if (!started) {
      started = true;
      onStart();
    }
  }

  return { h, api, request, stream, marked, fmt, tabs, boot, showError, ApiError, $ };
})();
