// Callers waiting for jobs to finish (POST /jobs with wait, run_task with wait): woken by the
// service when a job of this process finishes, or by a look at the store now and then for a
// job finished elsewhere (another pod, or cancelled by another process).
import { isFinished, type Job } from "./schema";

export interface WaitOptions {
  /** Give up after this long and answer with the job as it is then. */
  boundMs: number;
  /** The caller went away: answer with the job as it is. */
  signal?: AbortSignal;
  /** The job as the store has it now. */
  read: () => Promise<Job>;
  pollMs?: number;
}

export class Waiters {
  private readonly byId = new Map<string, Set<(job: Job) => void>>();

  /** `settledHere(id)`: false while this process still stops the job's agent (its record may already say cancelled). */
  constructor(private readonly settledHere: (id: string) => boolean = () => true) {}

  notify(job: Job): void {
    const set = this.byId.get(job.id);
    if (!set) return;
    this.byId.delete(job.id);
    for (const wake of set) wake(job);
  }

  wait(id: string, opts: WaitOptions): Promise<Job> {
    return new Promise<Job>((resolve) => {
      let settled = false;
      const set = this.byId.get(id) ?? new Set();
      this.byId.set(id, set);
      const done = (value: Job | Promise<Job>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(poll);
        set.delete(onFinish);
        if (set.size === 0 && this.byId.get(id) === set) this.byId.delete(id);
        opts.signal?.removeEventListener("abort", giveUp);
        resolve(value);
      };
      const onFinish = (job: Job) => done(job);
      const giveUp = () => done(opts.read());
      set.add(onFinish);
      const timer = setTimeout(giveUp, opts.boundMs);
      const poll = setInterval(() => {
        void opts.read().then(
          (job) => isFinished(job.status) && this.settledHere(id) && done(job),
          () => {},
        );
      }, opts.pollMs ?? 1_000);
      opts.signal?.addEventListener("abort", giveUp, { once: true });
    });
  }
}
