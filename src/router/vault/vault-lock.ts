// Locks for the vault's shared files (lesson logs, the signal and ADR folders, the marker
// journal): callers in this process queue on a promise chain per path — no retry-and-backoff
// between them — and the head of the queue takes the cross-process file lock, so other
// processes on the same vault are still kept out.
import { withFileLock, type FileLockOptions } from "../../common/file-lock";

const queues = new Map<string, Promise<unknown>>();

export function withVaultLock<T>(path: string, fn: () => Promise<T>, opts: FileLockOptions = { timeoutMs: 30_000 }): Promise<T> {
  const prior = queues.get(path) ?? Promise.resolve();
  const run = prior.catch(() => {}).then(() => withFileLock(path, fn, opts));
  const tail = run.catch(() => {});
  queues.set(path, tail);
  void tail.then(() => {
    if (queues.get(path) === tail) queues.delete(path);
  });
  return run;
}
