// The one poller the tests wait with: ask again every few milliseconds until the condition the
// test cares about holds, and fail by name after a deadline. Never a fixed sleep: a sleep is
// either too short under load (a flaky test) or too long everywhere else (a slow one).

export interface UntilOptions {
  /** Give up after this long (default 10 s). */
  ms?: number;
  /** What is awaited, for the error ("the job to finish"); a function is asked at the deadline, to say what was seen. */
  what?: string | (() => string);
  /** Ask again after this long (default 20 ms). */
  every?: number;
}

type Answer<T> = Exclude<T, undefined | null | false>;

/**
 * Polls `probe` until it answers something other than `undefined`, `null` or `false`, and
 * returns that answer (so `until(() => list.find(...))` hands back what it found). Throws after
 * the deadline, naming what was awaited; an error the probe throws ends the wait at once.
 */
export async function until<T>(probe: () => T | Promise<T>, opts: number | UntilOptions = {}): Promise<Answer<T>> {
  const { ms = 10_000, what = "the condition", every = 20 } = typeof opts === "number" ? { ms: opts } : opts;
  const deadline = Date.now() + ms;
  for (;;) {
    const answer = await probe();
    if (answer !== undefined && answer !== null && answer !== false) return answer as Answer<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${typeof what === "function" ? what() : what}`);
    await Bun.sleep(every);
  }
}
