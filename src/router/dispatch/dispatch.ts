// POST /dispatch's domain: assemble a bundle (the task, a brief or search context, its
// sources), keep it, and submit it to the job orchestrator as a job. The bundle is stored
// before the submission, so an unreachable orchestrator loses nothing.
import { DomainError, type ErrorKind } from "../../common/domain-error";
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
  const kept = { bundle_id: id, bundle: where };
  const orchestratorUrl = deps.orchestratorUrl;
  let res: Response;
  try {
    res = await fetch(`${orchestratorUrl.replace(/\/+$/, "")}/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(deps.serviceApiKey ? { authorization: `Bearer ${deps.serviceApiKey}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
  } catch (err) {
    const timedOut = (err as Error).name === "TimeoutError";
    throw new DomainError(
      timedOut ? "timeout" : "upstream",
      timedOut ? "orchestrator_timeout" : "orchestrator_unreachable",
      timedOut
        ? `the job orchestrator at ${orchestratorUrl} did not answer within ${deps.timeoutMs / 1000} s; bundle ${id} is kept at ${where} (the job may still have been queued)`
        : `the job orchestrator at ${orchestratorUrl} did not answer (${(err as Error).message}); bundle ${id} is kept at ${where}`,
      { details: kept },
    );
  }
  const answer = (await res.json().catch(() => null)) as { id?: string; status?: string; error?: { code?: string; message?: string } } | null;
  if (!res.ok || !answer?.id) throw orchestratorRefusal(res, answer?.error, id, where);
  return {
    bundle_id: id,
    bundle: where,
    job_id: answer.id,
    status: answer.status ?? "queued",
    sources: context.citations.map((c) => c.path),
    ...(req.include_linked ? { linked: linked.map((l) => l.path) } : {}),
  };
}

/** A refused or failed submission, in the caller's terms: what the orchestrator meant, the kept bundle in details. */
function orchestratorRefusal(res: Response, error: { code?: string; message?: string } | undefined, id: string, where: string): DomainError {
  const status = res.status;
  const why = typeof error?.message === "string" ? error.message : `status ${status}`;
  const details = { bundle_id: id, bundle: where, orchestrator_status: status, ...(typeof error?.code === "string" && { orchestrator_code: error.code }) };
  const kept = `bundle ${id} is kept at ${where}`;
  // Its key refused: the router's configuration is wrong, not the caller's request.
  if (status === 401 || status === 403) {
    return new DomainError(
      "upstream",
      "orchestrator_auth_failed",
      `the job orchestrator refused the router's key (${status}: ${why}): set SERVICE_API_KEY to one of its SERVICE_API_KEYS; ${kept}`,
      { details },
    );
  }
  // No /jobs there, or not this method: ORCHESTRATOR_URL names something else.
  if (status === 404 || status === 405) {
    return new DomainError(
      "upstream",
      "orchestrator_error",
      `${res.url} answered ${status} (${why}): is ORCHESTRATOR_URL the job orchestrator's base URL? ${kept}`,
      { details },
    );
  }
  // Any other 4xx is the caller's to fix, and a 503 (draining, stopping) says when to retry:
  // passed on with the orchestrator's own status class, code and message.
  const kind = PASSED_ON[status] ?? (status >= 400 && status < 500 ? "invalid" : undefined);
  if (kind) {
    const retry = Number(res.headers.get("retry-after"));
    return new DomainError(kind, typeof error?.code === "string" ? error.code : "job_rejected", `the job orchestrator refused the job: ${why}; ${kept}`, {
      details,
      ...(Number.isFinite(retry) && retry > 0 && { retryAfterSeconds: retry }),
    });
  }
  return new DomainError("upstream", "orchestrator_error", `the job orchestrator answered ${status}: ${why}; ${kept}`, { details });
}

/** The orchestrator's statuses the router answers as they are (the rest of 4xx: 400; of 5xx: 502). */
const PASSED_ON: Record<number, ErrorKind> = { 400: "invalid", 409: "conflict", 413: "too_large", 422: "invalid", 429: "busy", 503: "unavailable" };
