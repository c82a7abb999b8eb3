// The router's console: search with marked snippets, the seven pipeline stages with their
// verdicts and evidence, and the feed (hot arcs with heat, lessons, signals live).
"use strict";
(() => {
  const { h, api, stream, marked, fmt, tabs, boot, showError } = ui;

  // --- search
  function renderSearch(section) {
    const input = h("input", {
      type: "search",
      id: "search-query",
      name: "query",
      placeholder: 'words, "phrases", tag:x, producer:x',
      "aria-label": "Search the vault",
      required: true,
    });
    const button = h("button", { class: "primary", type: "submit" }, "Search");
    const status = h("p", { class: "muted small", role: "status", "aria-live": "polite" });
    const list = h("ol", { class: "hits", id: "search-hits", "aria-label": "Search results" });
    const form = h(
      "form",
      {
        class: "row",
        role: "search",
        onsubmit: async (e) => {
          e.preventDefault();
          const query = input.value.trim();
          if (!query) return;
          button.disabled = true;
          status.textContent = "Searching…";
          try {
            const r = await api("/search", { method: "POST", body: { query, limit: 20 } });
            showError();
            status.textContent = `${r.hits.length} hit${r.hits.length === 1 ? "" : "s"} · ${r.mode} · ${r.took_ms} ms`;
            list.replaceChildren(
              ...(r.hits.length === 0
                ? [h("li", { class: "empty" }, "Nothing matches.")]
                : r.hits.map((hit) =>
                    h(
                      "li",
                      {},
                      h("div", { class: "hit-title" }, hit.title || hit.path),
                      h(
                        "div",
                        { class: "hit-meta" },
                        `${hit.path} · ${hit.producer} · score ${hit.score.toFixed(3)} · words ${Math.round(hit.coverage * 100)}%${hit.tags.length ? ` · ${hit.tags.map((t) => `#${t}`).join(" ")}` : ""}`,
                      ),
                      h("p", { class: "snippet", html: marked(hit.snippet) }),
                    ),
                  )),
            );
          } catch (err) {
            status.textContent = "";
            showError(err);
          } finally {
            button.disabled = false;
          }
        },
      },
      input,
      button,
    );
    section.append(h("div", { class: "panel" }, h("h2", {}, "Search"), form, status, list));
  }

  // --- pipeline
  let pipelineBox;
  let pipelineStatus;
  function renderPipeline(section) {
    pipelineStatus = h("span", { class: "chip neutral", id: "pipeline-status" }, "…");
    pipelineBox = h("div", { class: "stages", id: "pipeline-stages" });
    const checked = h("span", { class: "muted small", id: "pipeline-checked" });
    section.append(
      h(
        "div",
        { class: "panel" },
        h(
          "h2",
          {},
          "Pipeline",
          pipelineStatus,
          h("span", { class: "spacer" }),
          checked,
          h("button", { class: "secondary", type: "button", onclick: loadPipeline }, "Check again"),
        ),
        pipelineBox,
      ),
    );
    pipelineBox.checked = checked;
  }
  async function loadPipeline() {
    try {
      const r = await api("/health/pipeline");
      showError();
      pipelineStatus.className = `chip ${r.status}`;
      pipelineStatus.textContent = r.status;
      pipelineBox.checked.textContent = `checked ${fmt.time(r.checked_at)} · ${r.took_ms} ms`;
      pipelineBox.replaceChildren(
        ...r.stages.map((s) =>
          h(
            "article",
            { class: `stage ${s.verdict}`, "data-stage": s.name, "data-verdict": s.verdict, "aria-label": `${s.name}: ${s.verdict}` },
            h("h3", {}, s.name, h("span", { class: `chip ${s.verdict}` }, s.verdict)),
            h("p", {}, s.message),
            evidence(s.evidence),
          ),
        ),
      );
    } catch (err) {
      showError(err);
    }
  }
  function evidence(ev) {
    const entries = Object.entries(ev || {});
    if (entries.length === 0) return null;
    const dl = h("dl", { class: "evidence" });
    for (const [k, v] of entries) dl.append(h("dt", {}, k), h("dd", {}, typeof v === "string" ? v : JSON.stringify(v)));
    return h("details", {}, h("summary", { class: "small muted" }, "Evidence"), dl);
  }

  // --- feed: hot arcs, lessons, signals (live)
  let arcsBody;
  let lessonsList;
  let signalsList;
  let liveChip;
  function renderFeed(section) {
    arcsBody = h("tbody", { id: "hot-arcs" });
    lessonsList = h("ul", { class: "list", id: "lessons" });
    signalsList = h("ul", { class: "list", id: "signals", "aria-live": "polite" });
    liveChip = h("span", { class: "chip neutral", id: "signals-live" }, "connecting");
    section.append(
      h(
        "div",
        { class: "panel" },
        h("h2", {}, "Hot arcs", h("span", { class: "spacer" }), h("button", { class: "secondary", type: "button", onclick: loadFeed }, "Refresh")),
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            {},
            h("thead", {}, h("tr", {}, h("th", {}, "Arc"), h("th", {}, "Heat"), h("th", { class: "hide-narrow" }, "Region"), h("th", {}, "Status"))),
            arcsBody,
          ),
        ),
      ),
      h(
        "div",
        { class: "grid-2" },
        h("div", { class: "panel" }, h("h2", {}, "Signals", liveChip), signalsList),
        h("div", { class: "panel" }, h("h2", {}, "Lessons"), lessonsList),
      ),
    );
  }
  async function loadFeed() {
    try {
      const f = await api("/feed");
      showError();
      const maxHeat = Math.max(1, ...f.hot_arcs.map((a) => a.heat));
      arcsBody.replaceChildren(
        ...(f.hot_arcs.length === 0
          ? [h("tr", {}, h("td", { colspan: 4, class: "empty" }, "No hot arcs yet (a tick writes them)."))]
          : f.hot_arcs.map((a) =>
              h(
                "tr",
                {},
                h("td", {}, h("div", { class: "hit-title" }, a.title), h("div", { class: "muted small" }, a.summary)),
                h(
                  "td",
                  {},
                  h(
                    "div",
                    { class: "heat", "aria-label": `heat ${a.heat}` },
                    h("div", { class: "heat-bar", style: `width:${Math.max(6, (a.heat / maxHeat) * 80)}px` }),
                    h("span", { class: "mono" }, a.heat.toFixed(2)),
                  ),
                ),
                h("td", { class: "hide-narrow" }, a.region),
                h("td", {}, h("span", { class: `chip ${a.status === "hot" ? "fail" : "warn"}` }, a.status)),
              ),
            )),
      );
      lessonsList.replaceChildren(
        ...(f.lessons.length === 0
          ? [h("li", { class: "empty" }, "No lessons yet.")]
          : f.lessons.map((l) => h("li", {}, l.text, h("div", { class: "muted small" }, `${l.source} · ${fmt.ago(l.ts)}`)))),
      );
      signalsList.replaceChildren(...f.signals.map((s) => signalItem(s.severity, s.title, s.source, s.last_seen, s.count)));
      if (f.signals.length === 0) signalsList.append(h("li", { class: "empty", id: "no-signals" }, "No live signals."));
    } catch (err) {
      showError(err);
    }
  }
  const severityChip = (s) => (s === "critical" || s === "high" ? "fail" : s === "medium" ? "warn" : "neutral");
  const signalItem = (severity, title, source, at, count) =>
    h(
      "li",
      { "data-severity": severity },
      h("span", { class: `chip ${severityChip(severity)}` }, severity),
      " ",
      h("b", {}, title),
      h("div", { class: "muted small" }, `${source || "unknown"} · ${fmt.ago(at)}${count > 1 ? ` · ×${count}` : ""}`),
    );

  async function followSignals() {
    let last;
    for (let attempt = 0; ; attempt++) {
      try {
        liveChip.className = "chip live";
        liveChip.textContent = "live";
        await stream("/signal", {
          lastEventId: last,
          onEvent: (e) => {
            last = e.id;
            if (e.event !== "signal") return;
            const s = JSON.parse(e.data);
            document.getElementById("no-signals")?.remove();
            signalsList.prepend(signalItem(s.severity, s.title, s.source, s.ts, s.count));
          },
        });
      } catch (err) {
        if (err.status === 401) return;
      }
      liveChip.className = "chip warn";
      liveChip.textContent = "reconnecting";
      await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** attempt, 15000)));
    }
  }

  boot(() => {
    tabs([
      { id: "search", label: "Search", render: renderSearch, show: () => document.getElementById("search-query").focus() },
      { id: "pipeline", label: "Pipeline", render: renderPipeline, show: loadPipeline },
      { id: "feed", label: "Feed", render: renderFeed, show: loadFeed },
    ]);
    followSignals();
  });
})();
