// The orchestrator's console: jobs with live status, a job's live event log, a form to submit
// one, the profiles, and this pod's drain state.
"use strict";
(() => {
  const { h, api, stream, fmt, tabs, boot, showError } = ui;
  const finished = (s) => s === "succeeded" || s === "failed" || s === "cancelled";
  const clip = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
  const oneLine = (s) => String(s).replace(/\s+/g, " ").trim();
  const PREVIEW = ["command", "file_path", "path", "pattern", "url", "query", "prompt", "description"];
  const argsPreview = (input) => {
    if (typeof input === "string") return oneLine(input);
    if (input && typeof input === "object") {
      for (const k of PREVIEW) if (typeof input[k] === "string" && input[k]) return oneLine(input[k]);
      return oneLine(JSON.stringify(input));
    }
    return "";
  };

  // --- pod state (drain) and the jobs list: the list is live (GET /jobs/events, read with fetch so
  // the token goes along); only while that stream is broken is the list fetched, at each retry.
  let podLine;
  let jobsBody;
  let liveChip;
  let selected;
  const jobs = new Map();
  const LIST = 50;
  async function loadPod() {
    try {
      const p = await api("/admin/status");
      podLine.replaceChildren(
        h("span", { class: `chip ${p.draining ? "draining" : "ok"}`, id: "drain-state" }, p.draining ? "draining" : "accepting jobs"),
        ` pod ${p.pod_name} · ${p.running}/${p.max_parallel} running · ${p.queued} queued`,
      );
    } catch (err) {
      showError(err);
    }
  }
  let podTimer;
  /** The pod line follows the jobs: refreshed (at most every 300 ms) when one changes. */
  const refreshPod = () => {
    if (podTimer) return;
    podTimer = setTimeout(() => {
      podTimer = undefined;
      loadPod();
    }, 300);
  };
  function renderList() {
    const list = [...jobs.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0)).slice(0, LIST);
    jobsBody.replaceChildren(
      ...(list.length === 0
        ? [h("tr", {}, h("td", { colspan: 5, class: "empty" }, "No jobs yet: submit one above."))]
        : list.map((j) =>
            h(
              "tr",
              {
                class: "clickable",
                tabindex: 0,
                "data-job-id": j.id,
                "aria-selected": String(j.id === selected),
                "aria-label": `job ${j.id.slice(-8)}, ${j.status}: ${j.task}`,
                onclick: () => openJob(j.id),
                onkeydown: (e) => {
                  if (e.key !== "Enter" && e.key !== " ") return;
                  e.preventDefault();
                  openJob(j.id);
                },
              },
              h("td", {}, h("span", { class: `chip ${j.status}`, "data-status": j.status }, j.status)),
              h("td", {}, clip(oneLine(j.task), 90), h("div", { class: "muted small mono" }, j.id.slice(-8))),
              h("td", { class: "hide-narrow" }, j.profile),
              h("td", { class: "hide-narrow" }, fmt.ago(j.created_at)),
              h("td", {}, fmt.usd(j.total_cost_usd ?? j.cost_usd)),
            ),
          )),
    );
  }
  /** The fallback: the list fetched once (while the live stream is broken). */
  async function loadJobs() {
    try {
      const r = await api(`/jobs?limit=${LIST}`);
      showError();
      jobs.clear();
      for (const j of r.jobs) jobs.set(j.id, j);
      renderList();
    } catch (err) {
      showError(err);
    }
  }
  const setLive = (live) => {
    liveChip.textContent = live ? "live" : "reconnecting";
    liveChip.className = `chip ${live ? "live" : "draining"}`;
    liveChip.dataset.live = String(live);
  };
  let liveStarted = false;
  async function liveJobs() {
    if (liveStarted) return;
    liveStarted = true;
    for (let attempt = 0; ; attempt++) {
      let synced = false;
      const first = new Map();
      try {
        await stream(`/jobs/events?limit=${LIST}`, {
          onEvent: (e) => {
            const data = JSON.parse(e.data);
            if (e.event === "synced") {
              synced = true;
              attempt = 0;
              jobs.clear();
              for (const [id, j] of first) jobs.set(id, j);
              showError();
              setLive(true);
              renderList();
            } else if (e.event === "job") {
              if (!synced) {
                first.set(data.id, data);
                return;
              }
              jobs.set(data.id, data);
              renderList();
              refreshPod();
              if (data.id === selected) void showRecord(data.id);
            }
          },
        });
      } catch (err) {
        if (err.status === 401) return;
        if (err.status) showError(err);
      }
      // The stream ended or failed: the list as it is now, then try again.
      setLive(false);
      await loadJobs();
      await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** attempt, 10000)));
    }
  }

  // --- one job: its record and its event log, live
  let detail;
  let totals;
  let log;
  let watching;
  async function openJob(id) {
    selected = id;
    for (const tr of jobsBody.querySelectorAll("tr[data-job-id]")) tr.setAttribute("aria-selected", String(tr.dataset.jobId === id));
    watching?.abort();
    const abort = new AbortController();
    watching = abort;
    log.replaceChildren();
    await showRecord(id);
    let last = 0;
    for (let attempt = 0; !abort.signal.aborted && attempt < 20; attempt++) {
      let ended = false;
      try {
        await stream(`/jobs/${id}/events`, {
          lastEventId: last,
          signal: abort.signal,
          onEvent: (e) => {
            last = Number(e.id);
            const ev = JSON.parse(e.data);
            addEvent(e.event, ev);
            if (e.event === "status" || e.event === "usage") void showRecord(id);
            if (e.event === "status" && finished(ev.status)) ended = true;
          },
        });
      } catch (err) {
        if (abort.signal.aborted || err.status) return err.status && showError(err);
      }
      if (ended || abort.signal.aborted) return;
      const job = await api(`/jobs/${id}`).catch(() => null);
      if (!job || finished(job.status)) return;
      await new Promise((r) => setTimeout(r, Math.min(500 * 2 ** attempt, 5000)));
    }
  }
  async function showRecord(id) {
    const j = await api(`/jobs/${id}`).catch((err) => {
      showError(err);
      return null;
    });
    if (!j || id !== selected) return;
    detail.replaceChildren(
      ...[
        h("span", { class: `chip ${j.status}`, id: "job-status" }, j.status),
        " ",
        h("span", { class: "mono small" }, j.id),
        h("p", {}, j.task),
        // The vault's notes the agent's first turn was given.
        j.recall?.length
          ? h("p", { class: "small", id: "job-recall" }, h("b", {}, "Recalled "), j.recall.map((n) => `${n.kind}: ${n.path}`).join(" · "))
          : null,
        j.error ? h("p", { class: "error-box" }, j.error) : null,
      ].filter(Boolean),
    );
    const u = j.usage || {};
    const tokens = (u.input_tokens || 0) + (u.output_tokens || 0) + (u.cache_creation_input_tokens || 0) + (u.cache_read_input_tokens || 0);
    totals.replaceChildren(
      ...[
        h("span", {}, h("b", {}, "Profile "), j.profile),
        h("span", {}, h("b", {}, "Elapsed "), fmt.ms(j.duration_ms ?? (j.started_at ? Date.now() - Date.parse(j.started_at) : null))),
        h("span", {}, h("b", {}, "Turns "), j.num_turns ?? "—"),
        h("span", {}, h("b", {}, "Tokens "), fmt.num(tokens)),
        h("span", {}, h("b", {}, "Cost "), fmt.usd(j.total_cost_usd ?? j.cost_usd)),
        j.max_budget_usd ? h("span", {}, h("b", {}, "Budget "), fmt.usd(j.max_budget_usd)) : null,
        j.pr_url ? h("span", {}, h("b", {}, "PR "), j.pr_url) : null,
      ].filter(Boolean),
    );
  }
  function addEvent(type, e) {
    let text;
    let extra = "";
    switch (type) {
      case "status":
        text = `● ${e.status}${e.error ? `: ${e.error}` : ""}`;
        break;
      case "thinking":
        text = `thinking: ${clip(oneLine(e.text), 300)}`;
        break;
      case "text":
        text = e.text;
        extra = e.final ? "final" : "";
        break;
      case "tool_use":
        text = `→ ${e.name} ${clip(argsPreview(e.input), 240)}`;
        break;
      case "tool_result":
        text = `  ${e.is_error ? "✗" : "✓"} ${clip(oneLine(e.content) || "(no output)", 300)}`;
        extra = e.is_error ? "is-error" : "";
        break;
      case "usage":
        return;
      case "error":
        text = `error (${e.code}): ${e.message}`;
        break;
      case "cut":
        text = `… ${e.message}`;
        break;
      default:
        text = JSON.stringify(e);
    }
    const stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
    log.append(h("div", { class: `ev-${type} ${extra}`, "data-type": type }, text));
    if (stick) log.scrollTop = log.scrollHeight;
  }

  function renderJobs(section) {
    podLine = h("div", { class: "small", id: "pod-status", role: "status" }, "…");
    const task = h("textarea", { id: "job-task", rows: 2, placeholder: "What should the agent do?", "aria-label": "Task", required: true });
    const profile = h("select", { id: "job-profile", "aria-label": "Profile" }, h("option", { value: "auto" }, "auto"));
    const budget = h("input", {
      id: "job-budget",
      type: "number",
      min: "0.01",
      step: "0.01",
      placeholder: "budget $",
      "aria-label": "Budget in US dollars (optional)",
      style: "width:8rem",
    });
    const run = h("button", { class: "primary", type: "submit" }, "Run");
    api("/profiles").then(
      (r) => profile.append(...r.profiles.map((p) => h("option", { value: p.name }, p.name))),
      () => {},
    );
    const form = h(
      "form",
      {
        class: "row",
        "aria-label": "New job",
        onsubmit: async (e) => {
          e.preventDefault();
          if (!task.value.trim()) return;
          run.disabled = true;
          try {
            const body = { task: task.value.trim(), profile: profile.value };
            if (budget.value) body.max_budget_usd = Number(budget.value);
            const job = await api("/jobs", { method: "POST", body });
            task.value = "";
            showError();
            if (!jobs.has(job.id)) {
              jobs.set(job.id, job);
              renderList();
            }
            openJob(job.id);
          } catch (err) {
            showError(err);
          } finally {
            run.disabled = false;
          }
        },
      },
      task,
      profile,
      budget,
      run,
    );
    jobsBody = h("tbody", { id: "jobs" });
    liveChip = h("span", { class: "chip", id: "jobs-live", role: "status", "aria-label": "Job list updates" }, "connecting");
    detail = h("div", { id: "job-detail" }, h("p", { class: "empty" }, "Select a job to watch it."));
    totals = h("div", { class: "totals", id: "job-totals" });
    log = h("div", { class: "log", id: "job-log", role: "log", "aria-label": "Job events", "aria-live": "polite" });
    section.append(
      h("div", { class: "panel" }, h("h2", {}, "New job", h("span", { class: "spacer" }), podLine), form),
      h(
        "div",
        { class: "grid-jobs" },
        h(
          "div",
          { class: "panel" },
          h("h2", {}, "Jobs", liveChip),
          h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              { "aria-label": "Jobs" },
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  h("th", {}, "Status"),
                  h("th", {}, "Task"),
                  h("th", { class: "hide-narrow" }, "Profile"),
                  h("th", { class: "hide-narrow" }, "Created"),
                  h("th", {}, "Cost"),
                ),
              ),
              jobsBody,
            ),
          ),
        ),
        h("div", { class: "panel" }, h("h2", {}, "Job"), detail, totals, log),
      ),
    );
  }

  let profilesBody;
  function renderProfiles(section) {
    profilesBody = h("tbody", { id: "profiles" });
    section.append(
      h(
        "div",
        { class: "panel" },
        h("h2", {}, "Profiles"),
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { "aria-label": "Profiles" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                h("th", {}, "Name"),
                h("th", {}, "Model"),
                h("th", {}, "Max turns"),
                h("th", {}, "Budget"),
                h("th", { class: "hide-narrow" }, "Auto PR"),
                h("th", { class: "hide-narrow" }, "Timeout"),
                h("th", { class: "hide-narrow" }, "Source"),
              ),
            ),
            profilesBody,
          ),
        ),
      ),
    );
  }
  async function loadProfiles() {
    try {
      const r = await api("/profiles");
      profilesBody.replaceChildren(
        ...r.profiles.map((p) =>
          h(
            "tr",
            {},
            h("td", {}, h("b", {}, p.name), h("div", { class: "muted small" }, p.description)),
            h("td", {}, p.model),
            h("td", {}, p.max_turns),
            h("td", {}, p.max_budget_usd ? fmt.usd(p.max_budget_usd) : "—"),
            h("td", { class: "hide-narrow" }, p.auto_pr ? "yes" : "no"),
            h("td", { class: "hide-narrow" }, `${p.timeout_seconds}s`),
            h("td", { class: "hide-narrow" }, p.source),
          ),
        ),
      );
    } catch (err) {
      showError(err);
    }
  }

  boot(() => {
    tabs([
      {
        id: "jobs",
        label: "Jobs",
        render: renderJobs,
        show: () => {
          liveJobs();
          loadPod();
        },
      },
      { id: "profiles", label: "Profiles", render: renderProfiles, show: loadProfiles },
    ]);
    // The drain state is the pod's, not a job's: it is read again every 15 s (the jobs are live).
    setInterval(() => {
      if (!document.hidden) loadPod();
    }, 15000);
  });
})();
