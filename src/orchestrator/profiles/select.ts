// Choosing a job's profile. An explicit name must exist; "auto" (the default) reads the task:
// the first keyword found decides, so "Review the fix" reviews and "Fix what the review found"
// codes. Deterministic and documented in docs/jobs.md.
import { DomainError } from "../../common/domain-error";
import { AUTO, type Profile } from "./profile";

/** An asked-for profile that does not exist: the caller's mistake (invalid). */
export class UnknownProfileError extends DomainError {
  constructor(
    readonly profile: string,
    known: string[],
  ) {
    super("invalid", "unknown_profile", `no profile named ${JSON.stringify(profile)}: use one of ${[AUTO, ...known].join(", ")}`);
    this.name = "UnknownProfileError";
  }
}

const REVIEW_WORDS = /\b(review|audit|explain|summari[sz]e|summary|describe|analy[sz]e|analysis|assess|inspect|critique|evaluate)\b/;
const CODE_WORDS = /\b(fix|implement|add|create|write|refactor|update|change|modify|remove|delete|rename|migrate|upgrade|bump|patch|convert|replace|resolve)\b/;

/**
 * The auto rule: the earliest review word (review, audit, explain, summarize/summarise, summary,
 * describe, analyze/analyse, analysis, assess, inspect, critique, evaluate) or change word (fix,
 * implement, add, create, write, refactor, update, change, modify, remove, delete, rename, migrate,
 * upgrade, bump, patch, convert, replace, resolve) decides; with neither, a question (ending in
 * "?") is a review and anything else is code.
 */
export function autoProfileName(task: string): "code" | "review" {
  const text = task.toLowerCase();
  const review = text.search(REVIEW_WORDS);
  const code = text.search(CODE_WORDS);
  if (review >= 0 && (code < 0 || review < code)) return "review";
  if (code >= 0) return "code";
  return text.trimEnd().endsWith("?") ? "review" : "code";
}

/** The profiles to choose from: a ProfileSet (load.ts) or anything that lists and finds them. */
export interface ProfileChoice {
  profiles: Profile[];
  get(name: string): Profile | undefined;
}

export function selectProfile(task: string, requested: string | undefined, profiles: ProfileChoice): Profile {
  const name = requested?.trim().toLowerCase() ?? "";
  const wanted = name === "" || name === AUTO ? autoProfileName(task) : name;
  const profile = profiles.get(wanted);
  if (!profile)
    throw new UnknownProfileError(
      requested ?? wanted,
      profiles.profiles.map((p) => p.name),
    );
  return profile;
}
