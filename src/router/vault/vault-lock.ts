// Locks for the vault's shared files (lesson logs, the signal and ADR folders, the marker
// journal, signals.md): callers in this process queue on a promise chain per path — no
// retry-and-backoff between them — and the head of the queue holds a claim file
// (`<path>.claim`, common/claim.ts), so other processes on the same vault are still kept out.
// A claim is one exclusive create and one unlink, cheaper than a proper-lockfile lock
// directory, which an import of thousands of notes would pay per signal and milestone. A claim
// whose holder died is taken over at once (same host) or once stale.
import { type ClaimOptions, withClaim } from "../../common/claim";

export function withVaultLock<T>(path: string, fn: () => Promise<T>, opts: ClaimOptions = { timeoutMs: 30_000 }): Promise<T> {
  return withClaim(`${path}.claim`, fn, opts);
}
