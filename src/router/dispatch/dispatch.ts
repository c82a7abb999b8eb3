// POST /dispatch's domain: assemble a bundle (the task, a brief or search context, its
// sources), keep it, and submit it to the job orchestrator as a job. The bundle is stored
// before the submission, so an unreachable orchestrator loses nothing.
import { DomainError } from "../../common/domain-error";
import { type BriefDeps, brief } from "../brief/brief";
import type { NotesDeps } from "../notes/file";
import type { BundleStore } from "./bundle-store";
import { linkedNotes, renderLinked } from "./linked";

export interface DispatchRequest {
  task: string;
  query?: string;
  repo_url?: string;
  profile?: string;
  /** Also bundle the notes the top sources link to and are linked from. */
  include_linked?: boolean;
}

export interface DispatchResult {
  bundle_id: string;
  /** Vault path (bundles/<id>.md) or s3:// URL. */
  bundle: string;
  job_id: string;
  status: string;
  sources: string[];
  /** Linked notes the bundle carries (include_linked). */
  linked?: string[];
}

export interface DispatchDeps extends BriefDeps {
  bundles: BundleStore;
  /** For include_linked: reading notes and their links. */
  notes?: NotesDeps;
  orchestratorUrl: string;
  serviceApiKey?: string;
  timeoutMs: number;
  now?: () => Date;
}

function bundleId(now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${stamp}-${crypto.randomUUID().slice(0, 8)}`;
}

function renderBundle(
  task: string,
  context: { text: string; synthesis: string; query: string },
  sources: Array<{ n: number; path: string; title: string }>,
  linked = "",
): string {
  const list = sources.map((s) => `- [${s.n}] ${s.title} (${s.path})`).join("\n") || "- (none)";
  return [
    "# Task",
    "",
    task.trim(),
    "",
    `## Context (${context.synthesis === "model" ? "brief" : "search"} for: ${context.query})`,
    "",
    context.text.trim(),
    "",
    "## Sources",
    "",
    list,
    "",
    ...(linked ? [linked] : []),
  ].join("\n");
}

export async function dispatch(deps: DispatchDeps, req: DispatchRequest): Promise<DispatchResult> {
  const query = req.query?.trim() || req.task;
  const context = await brief(deps, query);
  const id = bundleId((deps.now ?? (() => new Date()))());
  const linked =
    req.include_linked && deps.notes
      ? await linkedNotes(
          deps.notes,
          context.citations.map((c) => c.path),
        )
      : [];
  const markdown = renderBundle(req.task, context, context.citations, renderLinked(linked, context.citations));
  const where = await deps.bundles.put(id, markdown);

  const body = { task: markdown, ...(req.repo_url ? { repo_url: req.repo_url } : {}), ...(req.profile ? { profile: req.profile } : {}) };
  let res: Response;
  try {
    res = await fetch(`${deps.orchestratorUrl.replace(/\/+$/, "")}/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(deps.serviceApiKey ? { authorization: `Bearer ${deps.serviceApiKey}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
  } catch (err) {
    throw new DomainError(
      "upstream",
      "orchestrator_unreachable",
      `the job orchestrator at ${deps.orchestratorUrl} did not answer (${(err as Error).message}); bundle ${id} is kept at ${where}`,
      { details: { bundle_id: id, bundle: where } },
    );
  }
  const answer = (await res.json().catch(() => null)) as { id?: string; status?: string; error?: { code?: string; message?: string } } | null;
  if (!res.ok || !answer?.id) {
    const why = answer?.error?.message ?? `status ${res.status}`;
    // The caller's input was wrong (bad repo URL, unknown profile): say so with the same status.
    const rejected = res.status === 400 || res.status === 422;
    throw new DomainError(
      rejected ? "invalid" : "upstream",
      rejected ? "job_rejected" : "orchestrator_error",
      `the job orchestrator answered ${res.status}: ${why}; bundle ${id} is kept at ${where}`,
      {
        details: { bundle_id: id, bundle: where, orchestrator_status: res.status },
      },
    );
  }
  return {
    bundle_id: id,
    bundle: where,
    job_id: answer.id,
    status: answer.status ?? "queued",
    sources: context.citations.map((c) => c.path),
    ...(req.include_linked ? { linked: linked.map((l) => l.path) } : {}),
  };
}
