// The third relevance set (issue 35 part 2): notes shaped like an agent's memory — many short,
// dated notes from several sessions (dialog turns, incident notes, review comments) — and
// questions phrased the way people ask them, each answered by one note that shares few of the
// question's words with it.
//
// PROVENANCE: GENERATED. No public set of this shape (LoCoMo, LongMemEval) ships inside an npm
// package, and nothing else can be fetched here, so this set is made by the deterministic
// procedure below (seeded PRNG, templates in this file): it is written by the project, and the
// figures on it say how brain-stack ranks notes of this shape, not how it does on a set people
// outside the project wrote. Its traps are the ones such sets are known for: the answer shares
// one or two words with the question (a name, a service), while other notes hold more of the
// question's words — the question echoed in the dialog ("Maya, do you play any instruments?"),
// the same words in another sense ("play it safe"), and the same person talking of other things.
import { prng, type Rng } from "../../../test/support/vault-gen.ts";

export interface MemoryNote {
  path: string;
  content: string;
}

export interface MemoryQuery {
  id: number;
  kind: MemoryKind;
  query: string;
  relevant: string[];
}

export const MEMORY_KINDS = ["personal", "decision", "incident", "review"] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

export interface MemorySet {
  notes: MemoryNote[];
  queries: MemoryQuery[];
  seed: number;
}

const PEOPLE = ["Maya", "Tomasz", "Priya", "Jonas", "Aiko", "Lucas", "Fatima", "Oren", "Greta", "Kwame", "Sofia", "Dmitri", "Nadia", "Hugo", "Leila", "Ravi"];
const SERVICES = ["checkout", "billing-api", "search-indexer", "auth-gateway", "ledger", "notifier", "fraud-scorer", "image-resizer", "scheduler", "webhooks"];

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

/**
 * A case: the note holding the answer (few words in common with the question), the question,
 * and the distractors that hold more of the question's words than the answer does.
 */
interface Case {
  kind: MemoryKind;
  answer: (p: string, q: string, s: string) => string;
  question: (p: string, s: string) => string;
  distractors: Array<(p: string, q: string, s: string) => string>;
}

const CASES: Case[] = [
  {
    kind: "personal",
    answer: (p) => `${p}: I play clarinet, mostly in the community band on Thursdays.`,
    question: (p) => `What instruments does ${p} play?`,
    distractors: [
      (p, q) => `${q}: ${p}, you play any instruments?`,
      (p) => `${p}: let's play it safe and pin the version until Monday.`,
      (p) => `${p}: the instruments panel in Grafana shows the lag per partition.`,
    ],
  },
  {
    kind: "personal",
    answer: (p) => `${p}: the downside of a pet beagle: Biscuit chewed through my charger again.`,
    question: (p) => `What kind of pet does ${p} have?`,
    distractors: [
      (p, q) => `${q}: does ${p} have a pet? I heard barking on the call.`,
      (p) => `${p}: kind reminder that the pet project repo is archived now.`,
      (p) => `${p}: I have no idea what kind of cache that is.`,
    ],
  },
  {
    kind: "personal",
    answer: (p) => `${p}: the flat in Lisbon is signed, we're moving in June, so I'll be on Western European time.`,
    question: (p) => `Where is ${p} moving to?`,
    distractors: [
      (p, q) => `${q}: ${p}, are you moving somewhere? You mentioned boxes.`,
      (p) => `${p}: moving the cron job to the new runner today.`,
      (p) => `${p}: where is the moving average computed in that dashboard?`,
    ],
  },
  {
    kind: "personal",
    answer: (p) => `${p}: first race done, a half marathon on Sunday in 1:58, legs still hurt.`,
    question: (p) => `Which race did ${p} run recently?`,
    distractors: [
      (p, q) => `${q}: ${p} ran the migration recently, ask them.`,
      (p) => `${p}: there's a race in the lock code, two workers run the same job.`,
      (p) => `${p}: which run of the pipeline was green recently?`,
    ],
  },
  {
    kind: "decision",
    answer: (p, _q, s) => `${p}: for ${s} retries we settled on exponential backoff with full jitter, capped at five minutes.`,
    question: (_p, s) => `How did we decide ${s} should handle retrying failed calls?`,
    distractors: [
      (_p, q, s) => `${q}: ${s} calls failed again, who decided on the retrying policy?`,
      (p, _q, s) => `${p}: we should decide how ${s} handles the failed calls dashboard.`,
      (p) => `${p}: retrying now, the first call failed on a flaky runner.`,
    ],
  },
  {
    kind: "decision",
    answer: (p, _q, s) => `${p}: agreed: the ${s} database stays Postgres, no second datastore until ten million rows.`,
    question: (_p, s) => `Which database did the team choose for ${s}?`,
    distractors: [
      (_p, q, s) => `${q}: did the team choose the database for ${s} yet?`,
      (p, _q, s) => `${p}: the ${s} team wants to choose a new database client library.`,
      (p) => `${p}: choose any database name for the sandbox, it gets wiped.`,
    ],
  },
  {
    kind: "decision",
    answer: (p, _q, s) => `${p}: ${s} ships behind the flag for two weeks; the flag is removed only after the error rate stays flat.`,
    question: (_p, s) => `What is the rollout plan for ${s}?`,
    distractors: [
      (p, q, s) => `${q}: ${p}, is there a rollout plan for ${s}? Asking for the release notes.`,
      (p, _q, s) => `${p}: the plan for ${s} on-call rotation is in the wiki.`,
      (p) => `${p}: rollout of the new laptops is next week.`,
    ],
  },
  {
    kind: "incident",
    answer: (_p, _q, s) =>
      `Incident note: ${s} answered 502s for forty minutes. Root cause: the connection pool was exhausted after the deploy doubled the worker count.`,
    question: (_p, s) => `Why did ${s} go down last time?`,
    distractors: [
      (p, _q, s) => `${p}: ${s} is going down for maintenance last thing on Friday, heads up.`,
      (p, _q, s) => `${p}: why is ${s} so slow this time of day?`,
      (_p, q, s) => `${q}: did ${s} go down again? Pager went off.`,
    ],
  },
  {
    kind: "incident",
    answer: (_p, _q, s) => `Postmortem, ${s} outage: certificates expired overnight because the renewal job had been disabled during the migration.`,
    question: (_p, s) => `What caused the ${s} outage in the night?`,
    distractors: [
      (p, _q, s) => `${p}: the ${s} outage drill is scheduled for Tuesday night.`,
      (_p, q, s) => `${q}: what caused the ${s} alerts last night? Looked noisy.`,
      (p) => `${p}: caused by me, sorry, I pushed to the wrong branch.`,
    ],
  },
  {
    kind: "incident",
    answer: (p, _q, s) => `${p}: ${s} is fixed: drained the bad node and pinned the previous image; traffic recovered in six minutes.`,
    question: (_p, s) => `How was the ${s} problem fixed?`,
    distractors: [
      (_p, q, s) => `${q}: how was the ${s} problem found in the first place?`,
      (p, _q, s) => `${p}: the ${s} problem statement in the design doc needs fixing.`,
      (p) => `${p}: fixed the typo in the runbook.`,
    ],
  },
  {
    kind: "review",
    answer: (p, _q, s) => `Review comment (${p}) on ${s}: don't catch Exception here, let the middleware map it to a 500 and log the stack.`,
    question: (p, s) => `What did ${p} object to about error handling in the ${s} change?`,
    distractors: [
      (p, q, s) => `${q}: ${p}, any objection to merging the ${s} change?`,
      (p, _q, s) => `${p}: error handling docs for ${s} are out of date.`,
      (p) => `${p}: the change about handling timezones is merged.`,
    ],
  },
  {
    kind: "review",
    answer: (p, _q, s) => `Review comment (${p}) on ${s}: this loop issues one query per row; batch them with a single IN list.`,
    question: (p, s) => `Which performance issue did ${p} point out in the ${s} pull request?`,
    distractors: [
      (p, q, s) => `${q}: ${p} opened a pull request for ${s} performance tests.`,
      (p, _q, s) => `${p}: the ${s} pull request template has an issue link field now.`,
      (p) => `${p}: performance review season, please fill in the form.`,
    ],
  },
];

/** Ordinary dialog turns, incident notes and review comments: the bulk of the memory. */
const BACKGROUND: Array<(p: string, q: string, s: string, rng: Rng) => string> = [
  (p, _q, s) => `${p}: deployed ${s} to staging, smoke tests are green.`,
  (p, q) => `${p}: ${q}, can you take the on-call handover today?`,
  (p, _q, s) => `${p}: the ${s} dashboard needs a panel for queue depth.`,
  (p) => `${p}: lunch at noon? The place with the soup.`,
  (p, _q, s) => `${p}: bumped the ${s} memory limit to 1 GiB, it was getting OOM-killed.`,
  (_p, _q, s, rng) => `Incident note: ${s} latency p99 went to ${200 + Math.floor(rng() * 900)} ms for a few minutes; recovered on its own.`,
  (p, _q, s) => `Review comment (${p}) on ${s}: please add a test for the empty case.`,
  (p, _q, s) => `Review comment (${p}) on ${s}: naming nit, prefer the full word over the abbreviation.`,
  (p, q) => `${p}: thanks ${q}, that fixed it.`,
  (p, _q, s) => `${p}: who owns the ${s} alerts these days?`,
  (p) => `${p}: I'm out Friday, back Monday.`,
  (p, _q, s) => `${p}: the ${s} flaky test is quarantined until someone has time for it.`,
  (p, q, s) => `${p}: ${q}, the ${s} migration script is ready for review.`,
  (p) => `${p}: weekend was good, went hiking, weather was perfect.`,
  (p, _q, s) => `${p}: rotated the ${s} API keys, old ones stop working tomorrow.`,
  (p, _q, s) => `Review comment (${p}) on ${s}: can this config default live in one place?`,
  (_p, _q, s) => `Incident note: ${s} disk usage alert at 85%; old logs cleaned up.`,
  (p, q) => `${p}: ${q}, are you joining the retro?`,
  (p, _q, s) => `${p}: ${s} build takes eleven minutes now, the cache is cold after the runner upgrade.`,
  (p) => `${p}: coffee machine on the third floor is broken again.`,
];

export const MEMORY_SEED = 35;
/** Sessions, notes of background per session, and how often each case is asked (one person and service each time). */
const SESSIONS = 40;
const TURNS_PER_SESSION = 100;
const CASE_REPEATS = 12;

/** A dated note of one session, as the vault holds it. */
function memoryNote(session: number, turn: number, day: number, text: string): MemoryNote {
  const date = new Date(Date.UTC(2025, 0, 1 + day, 9, turn % 60)).toISOString();
  const path = `raw/memory/session-${String(session).padStart(2, "0")}/turn-${String(turn).padStart(4, "0")}.md`;
  return { path, content: `---\ntitle: "session ${session}, turn ${turn}"\ndate: ${date}\n---\n\n${text}\n` };
}

/** The set: the same seed gives the same notes and queries. */
export function agentMemorySet(seed = MEMORY_SEED): MemorySet {
  const rng = prng(seed);
  const notes: MemoryNote[] = [];
  const queries: MemoryQuery[] = [];
  const turns = new Map<number, number>();
  const put = (session: number, text: string) => {
    const turn = turns.get(session) ?? 0;
    turns.set(session, turn + 1);
    const note = memoryNote(session, turn, session * 3 + Math.floor(turn / 40), text);
    notes.push(note);
    return note.path;
  };
  for (let s = 0; s < SESSIONS; s++) {
    for (let t = 0; t < TURNS_PER_SESSION; t++) put(s, pick(rng, BACKGROUND)(pick(rng, PEOPLE), pick(rng, PEOPLE), pick(rng, SERVICES), rng));
  }
  let id = 0;
  for (let r = 0; r < CASE_REPEATS; r++) {
    CASES.forEach((c, k) => {
      const person = PEOPLE[(r * 5 + k * 3) % PEOPLE.length]!;
      const other = PEOPLE[(r * 5 + k * 3 + 7) % PEOPLE.length]!;
      const service = SERVICES[(r * 3 + k) % SERVICES.length]!;
      const session = Math.floor(rng() * SESSIONS);
      const answer = put(session, c.answer(person, other, service));
      // A distractor in some session, as a conversation comes back to a topic: one a case, in turn.
      put(Math.floor(rng() * SESSIONS), c.distractors[r % c.distractors.length]!(person, other, service));
      // The same question asked twice (a service-only question, the service come round again): both notes answer it.
      const query = c.question(person, service);
      const same = queries.find((q) => q.query === query);
      if (same) same.relevant.push(answer);
      else queries.push({ id: id++, kind: c.kind, query, relevant: [answer] });
    });
  }
  return { notes, queries, seed };
}
