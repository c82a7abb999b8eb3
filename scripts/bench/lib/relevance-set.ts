// The labelled relevance set for scripts/bench/relevance.ts, generated deterministically.
//
// A background vault of ordinary notes (vault-gen.ts) gets "cases" planted in it. A case is
// one thing that happened to one service, described by two concepts (say "connection pool
// exhausted" after a "schema migration"); its target note says so with one wording of each
// concept, and a third of the cases also have a follow-up note that says it with other
// wordings — both are relevant. Each case also plants two distractors: a note on the same
// service about other things, and a note on the same first concept for another service.
//
// Every case has one query, of one of four kinds:
//   keyword          the service and the target's own wording (what BM25 is good at)
//   paraphrase       the service and *other* wordings of both concepts (a lexical gap)
//   paraphrase-bare  other wordings of both concepts, no service name
//   question         a natural-language question with other wordings
// Relevant documents are the target and, when there is one, its follow-up.
//
// CONCEPTS is also the thesaurus of the synonym-aware embedding fixture (synonym-embeddings.ts):
// it stands in for what a real embedding model knows ("revert" ≈ "rollback"), and it knows
// every wording used here, so it is an upper bound on the help vectors can give, not a
// prediction for a real model.
import { fillerParagraph, PEOPLE, pick, prng, type Rng, SERVICES, slugify, TOPICS } from "../../../test/support/vault-gen.ts";

export interface Concept {
  id: string;
  /** The topic whose filler text surrounds a note about it. */
  topic: string;
  /** Different wordings of the same thing; they share as few words as English allows. */
  forms: readonly string[];
}

export const CONCEPTS: readonly Concept[] = [
  { id: "rollback", topic: "deploys", forms: ["rollback", "revert to the previous version", "undo the release"] },
  { id: "outage", topic: "incidents", forms: ["outage", "downtime", "service unavailable", "went dark"] },
  { id: "latency", topic: "observability", forms: ["high latency", "slow responses", "sluggish replies"] },
  { id: "memory-leak", topic: "observability", forms: ["memory leak", "heap growth", "rss keeps climbing"] },
  { id: "cert-expiry", topic: "networking", forms: ["certificate expired", "tls cert lapsed", "x509 validity ended"] },
  { id: "disk-full", topic: "storage", forms: ["disk full", "no space left on device", "volume ran out of room"] },
  { id: "pool-exhausted", topic: "databases", forms: ["connection pool exhausted", "too many clients", "ran out of db sessions"] },
  { id: "flaky-test", topic: "ci", forms: ["flaky test", "intermittent spec failure", "nondeterministic check"] },
  { id: "slow-ci", topic: "ci", forms: ["slow pipeline", "builds take forever", "long ci duration"] },
  { id: "token-refresh", topic: "auth", forms: ["oauth token refresh", "access credential renewal", "bearer renewal"] },
  { id: "rate-limit", topic: "networking", forms: ["rate limiting", "throttling", "429 responses"] },
  { id: "schema-migration", topic: "databases", forms: ["schema migration", "alter table", "ddl change"] },
  { id: "deadlock", topic: "databases", forms: ["deadlock", "lock contention", "transactions blocking each other"] },
  { id: "replica-lag", topic: "databases", forms: ["replication lag", "replica behind primary", "stale reads from the follower"] },
  { id: "dns-failure", topic: "networking", forms: ["dns resolution failure", "name lookup failed", "resolver nxdomain"] },
  { id: "cache-eviction", topic: "databases", forms: ["cache eviction", "keys evicted", "maxmemory policy dropping entries"] },
  { id: "feature-flag", topic: "deploys", forms: ["feature flag", "toggle", "kill switch"] },
  { id: "canary", topic: "deploys", forms: ["canary release", "staged rollout", "small slice of traffic first"] },
  { id: "secret-rotation", topic: "auth", forms: ["secret rotation", "credential rollover", "rotate api keys"] },
  { id: "cost-spike", topic: "cost", forms: ["cloud bill spike", "spend overrun", "invoice jumped"] },
  { id: "restore", topic: "storage", forms: ["backup restore", "point in time recovery", "recover from snapshot"] },
  { id: "autoscaling", topic: "cost", forms: ["autoscaling", "scale out automatically", "horizontal pod autoscaler"] },
  { id: "oom-kill", topic: "incidents", forms: ["oomkilled", "killed by the kernel for memory", "container memory limit hit"] },
  { id: "sso", topic: "auth", forms: ["single sign-on", "saml login", "identity provider federation"] },
  { id: "mfa", topic: "auth", forms: ["two-factor authentication", "mfa", "one-time code prompt"] },
  { id: "missing-index", topic: "databases", forms: ["missing index", "sequential scan", "full table scan"] },
  { id: "queue-backlog", topic: "incidents", forms: ["queue backlog", "consumer lag", "messages piling up"] },
  { id: "timeout", topic: "networking", forms: ["request timeout", "deadline exceeded", "calls hanging until cut off"] },
  { id: "crash-loop", topic: "incidents", forms: ["crashloopbackoff", "keeps restarting", "restart loop"] },
  { id: "permission-denied", topic: "auth", forms: ["permission denied", "access forbidden", "403 errors"] },
  { id: "log-volume", topic: "observability", forms: ["log volume", "noisy logs", "too much logging"] },
  { id: "alert-fatigue", topic: "observability", forms: ["alert fatigue", "noisy pager", "too many pages at night"] },
  { id: "clock-skew", topic: "networking", forms: ["clock skew", "time drift", "ntp out of sync"] },
  { id: "dependency-bump", topic: "ci", forms: ["dependency upgrade", "library version bump", "package update"] },
  { id: "image-size", topic: "ci", forms: ["bloated container image", "huge docker layers", "image size"] },
  { id: "cold-start", topic: "frontend", forms: ["cold start", "slow startup", "first request after boot is slow"] },
  { id: "data-loss", topic: "storage", forms: ["data loss", "records disappeared", "lost writes"] },
  { id: "hotfix", topic: "deploys", forms: ["hotfix", "emergency patch", "urgent fix shipped out of band"] },
  { id: "bundle-bloat", topic: "frontend", forms: ["bundle size regression", "javascript payload grew", "heavier client download"] },
  { id: "hydration", topic: "frontend", forms: ["hydration mismatch", "server and client markup differ", "react warns about rendered html"] },
];

export type QueryKind = "keyword" | "paraphrase" | "paraphrase-bare" | "question";
export const QUERY_KINDS: readonly QueryKind[] = ["keyword", "paraphrase", "paraphrase-bare", "question"];

export interface LabelledQuery {
  id: number;
  kind: QueryKind;
  query: string;
  /** Vault-relative paths of the relevant notes. */
  relevant: string[];
}

export interface PlantedNote {
  path: string;
  content: string;
}

export interface RelevanceSet {
  queries: LabelledQuery[];
  notes: PlantedNote[];
}

export const CASE_COUNT = 120;

const capital = (s: string) => s[0]!.toUpperCase() + s.slice(1);

/** Another form than `not`, chosen by rng. */
function otherForm(rng: Rng, c: Concept, not: string): string {
  return pick(
    rng,
    c.forms.filter((f) => f !== not),
  );
}

function note(path: string, title: string, tags: string[], paragraphs: string[]): PlantedNote {
  const body = paragraphs.map((p, i) => (i % 2 === 0 ? `## ${["What happened", "Details", "Fix", "Follow-ups"][(i / 2) | 0] ?? "Notes"}\n\n${p}` : p));
  return { path, content: `---\ntitle: "${title}"\ntags: [${tags.join(", ")}]\n---\n\n# ${title}\n\n${body.join("\n\n")}\n` };
}

/** Filler text around a case: ordinary sentences on the concept's topic about the service. */
function filler(rng: Rng, topic: string, svc: string, n: number): string[] {
  return Array.from({ length: n }, () => fillerParagraph(rng, topic, svc));
}

export function relevanceSet(seed = 42): RelevanceSet {
  const rng = prng(seed);
  const notes: PlantedNote[] = [];
  const queries: LabelledQuery[] = [];
  const n = CONCEPTS.length;
  const byPair = new Map<string, string[]>();
  const pairOf = new Map<number, string>();
  for (let k = 0; k < CASE_COUNT; k++) {
    const svc = SERVICES[(k * 5) % SERVICES.length]!;
    const c1 = CONCEPTS[(k * 7) % n]!;
    let c2 = CONCEPTS[(k * 13 + 5) % n]!;
    if (c2 === c1) c2 = CONCEPTS[(k * 13 + 6) % n]!;
    const a1 = pick(rng, c1.forms);
    const a2 = pick(rng, c2.forms);
    const person = pick(rng, PEOPLE);
    const dir = `raw/cases/${String(k).padStart(3, "0")}`;

    // The target: the service, both concepts in the target's wording, filler on c1's topic.
    const title = capital(`${svc}: ${a1} after ${a2}`);
    const target = `${dir}/${slugify(title)}.md`;
    notes.push(
      note(
        target,
        title,
        [c1.topic, svc],
        [
          `We hit ${a1} in ${svc} on a weekday afternoon; it started right after the ${a2}. ${capital(person)} traced the ${a1} back to the ${a2} and wrote down the fix.`,
          fillerParagraph(rng, c1.topic, svc),
          `Until the fix lands, expect ${a1} in ${svc} whenever a ${a2} happens again.`,
          ...filler(rng, c2.topic, svc, 2),
        ],
      ),
    );
    const relevant = [target];

    // A follow-up for a third of the cases, in other words than the target's.
    if (k % 3 === 0) {
      const b1 = otherForm(rng, c1, a1);
      const b2 = otherForm(rng, c2, a2);
      const fTitle = capital(`Follow-up on ${svc}: ${b1}`);
      const follow = `${dir}/${slugify(fTitle)}.md`;
      notes.push(
        note(
          follow,
          fTitle,
          [c1.topic, svc, "follow-up"],
          [`A week later ${svc} showed ${b1} again, once more on the heels of a ${b2}. This time the runbook was ready.`, ...filler(rng, c1.topic, svc, 2)],
        ),
      );
      relevant.push(follow);
    }

    // Distractors: same service, other concepts; same first concept, another service.
    const c3 = CONCEPTS[(k * 11 + 3) % n]!;
    const c4 = CONCEPTS[(k * 17 + 9) % n]!;
    const d1Title = capital(`${svc}: ${pick(rng, c3.forms)} and ${pick(rng, c4.forms)}`);
    notes.push(
      note(
        `${dir}/${slugify(d1Title)}.md`,
        d1Title,
        [c3.topic, svc],
        [`${capital(svc)} had a rough week: ${pick(rng, c3.forms)}, then ${pick(rng, c4.forms)}.`, ...filler(rng, c3.topic, svc, 3)],
      ),
    );
    const other = SERVICES[(k * 5 + 11) % SERVICES.length]!;
    const c5 = CONCEPTS[(k * 3 + 20) % n]!;
    const d2Title = capital(`${other}: ${a1} during ${pick(rng, c5.forms)}`);
    notes.push(
      note(
        `${dir}/${slugify(d2Title)}.md`,
        d2Title,
        [c1.topic, other],
        [`${capital(other)} saw ${a1} while we were busy with ${pick(rng, c5.forms)}.`, ...filler(rng, c1.topic, other, 3)],
      ),
    );

    // The query.
    const kind = QUERY_KINDS[(k + Math.floor(k / n)) % QUERY_KINDS.length]!;
    const q1 = otherForm(rng, c1, a1);
    const q2 = otherForm(rng, c2, a2);
    const query =
      kind === "keyword"
        ? `${svc} ${a1}${k % 2 === 0 ? ` ${a2}` : ""}`
        : kind === "paraphrase"
          ? `${svc} ${q1} ${q2}`
          : kind === "paraphrase-bare"
            ? `${q1} after ${q2}`
            : `why did ${svc} have ${q1} when we did the ${q2}?`;
    queries.push({ id: k, kind, query, relevant });
    const pair = `${c1.id}+${c2.id}`;
    byPair.set(pair, [...(byPair.get(pair) ?? []), ...relevant]);
    pairOf.set(k, pair);
  }
  // Cases k, k+40 and k+80 share a concept pair (for other services); a query that names no
  // service is answered by all of their notes. (The kind rotation gives at most one of them
  // a bare query.)
  for (const q of queries) if (q.kind === "paraphrase-bare") q.relevant = byPair.get(pairOf.get(q.id)!)!;
  return { queries, notes };
}

// Every concept's topic must exist in vault-gen (a typo would silently give empty filler).
for (const c of CONCEPTS) if (!TOPICS.some((t) => t.name === c.topic)) throw new Error(`relevance-set: unknown topic ${c.topic}`);
