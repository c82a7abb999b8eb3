// One run of the agent CLI: spawned with Bun.spawn in its own process group, stdout read line
// by line as it arrives and parsed into events, stderr kept as a short tail. Cancel and
// timeout send SIGTERM to the group, then SIGKILL once the grace period is over.
import type { Subprocess } from "bun";
import { log } from "../../common/logger";
import { type AgentArgs, buildAgentArgv } from "./argv";
import { type AgentOutcome, OutcomeCollector } from "./outcome";
import { openStdoutPipe, type StdoutPipe } from "./stdout-pipe";
import { type AgentEvent, parseAgentLine, readLineBatches } from "./stream-json";

const logger = log("agent");

const DEFAULT_KILL_GRACE_MS = 5000;
const STDERR_TAIL_BYTES = 8 * 1024;
/** A burst of output gathers this long before it is read (readLineBatches): one read, map and write per burst. */
const READ_GATHER_MS = 1;

export interface StartAgentOptions {
  /** Path or name (PATH lookup) of the agent CLI. */
  binary: string;
  args: AgentArgs;
  cwd: string;
  env: Record<string, string>;
  /** Kill the run after this long; the outcome says timedOut. */
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL (default 5 s). */
  killGraceMs?: number;
  /** Aborting it cancels the run (same as cancel()). */
  signal?: AbortSignal;
  /** How long a burst of output gathers before it is read (default 1 ms; see readLineBatches). */
  readGatherMs?: number;
  /** false: stdout is Bun's socketpair even where a real pipe can be made (stdout-pipe.ts), as where it cannot. */
  stdoutPipe?: boolean;
}

/**
 * The agent CLI could not be started. The message goes into job records and answers, so it
 * names no local path and no argument (the prompt); `detail` has both, for the service log.
 */
export class AgentSpawnError extends Error {
  readonly code = "agent_spawn_failed";
  readonly detail: string;
  constructor(binary: string, cause: unknown) {
    const reason = (cause as { code?: string }).code ?? "spawn failed";
    super(`cannot start the agent CLI (${reason}); install it or point SERVICE_CLAUDE_BINARY at it (the service log has the details)`);
    this.detail = `cannot start ${JSON.stringify(binary)}: ${(cause as Error).message ?? cause}`;
    this.name = "AgentSpawnError";
  }
}

export interface AgentRun {
  readonly pid: number;
  readonly argv: readonly string[];
  /**
   * The events as they arrive. Call it once, before wait(), and iterate it (to the end, or stop
   * early with break/return: the rest is then read, and folded into the outcome, by wait()).
   */
  events(): AsyncGenerator<AgentEvent>;
  /**
   * The same events a read of stdout at a time (never empty): a burst costs one async hop, not
   * one per line. Use either this or events(), once.
   */
  batches(): AsyncGenerator<AgentEvent[]>;
  /** Resolves when the process has exited and its output is read. */
  wait(): Promise<AgentOutcome>;
  /**
   * Resolves as soon as the agent process itself has exited, whether or not its output has been
   * read (what holds a conversation's turn is the process, not the reading of its output).
   */
  readonly exited: Promise<void>;
  /** SIGTERM now, SIGKILL after the grace period if it is still alive. Idempotent. */
  cancel(): void;
}

export function startAgent(opts: StartAgentOptions): AgentRun {
  const cmd = buildAgentArgv(opts.args);
  let proc: AgentProcess;
  // A real pipe where there is one (stdout-pipe.ts: a burst of lines is one cheap read), else Bun's socketpair.
  const pipe = opts.stdoutPipe === false ? undefined : openStdoutPipe();
  try {
    proc = Bun.spawn([opts.binary, ...cmd.argv], {
      cwd: opts.cwd,
      env: opts.env,
      stdin: cmd.stdin === undefined ? "ignore" : "pipe",
      stdout: pipe ? pipe.write : "pipe",
      stderr: "pipe",
      // Own process group: cancel reaches the tools the agent started, not just the agent.
      detached: true,
    }) as AgentProcess;
  } catch (err) {
    pipe?.closeWrite();
    pipe?.close();
    const spawnError = new AgentSpawnError(opts.binary, err);
    logger.error(spawnError.detail);
    throw spawnError;
  }
  if (cmd.stdin !== undefined && proc.stdin) {
    const sink = proc.stdin;
    sink.write(cmd.stdin);
    void Promise.resolve(sink.end()).catch(() => {});
  }
  // The child has its copy of the write end: ours must go, or the read end never sees EOF.
  pipe?.closeWrite();
  return new Run(proc, opts, cmd.argv, pipe);
}

type AgentProcess = Subprocess<"pipe" | "ignore", "pipe", "pipe">;

class Run implements AgentRun {
  readonly pid: number;
  readonly exited: Promise<void>;
  private readonly lines: AsyncGenerator<string[]>;
  private readonly collector: OutcomeCollector;
  private readonly stderr: Promise<string>;
  private pulling: Promise<AgentEvent[] | undefined> = Promise.resolve(undefined);
  private ended = false;
  private iterating: Promise<void> | undefined;
  private outcome: Promise<AgentOutcome> | undefined;
  private cancelled = false;
  private timedOut = false;
  /** Stopped because the model API refused in a way no retry fixes. */
  private stopped = false;
  private killTimer: ReturnType<typeof setTimeout> | undefined;
  private timeoutTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly onAbort = () => this.cancel();

  constructor(
    private readonly proc: AgentProcess,
    private readonly opts: StartAgentOptions,
    readonly argv: readonly string[],
    /** stdout as our own pipe (proc.stdout is then unset); its read end is closed once read to the end. */
    private readonly pipe: StdoutPipe | undefined,
  ) {
    this.pid = proc.pid;
    this.exited = proc.exited.then(
      () => {},
      () => {},
    );
    this.lines = readLineBatches(pipe ? pipe.stream : proc.stdout, { gatherMs: opts.readGatherMs ?? READ_GATHER_MS });
    this.collector = new OutcomeCollector(opts.args.resume ?? opts.args.sessionId);
    this.stderr = tail(proc.stderr, STDERR_TAIL_BYTES);
    if (opts.timeoutMs !== undefined) {
      this.timeoutTimer = setTimeout(() => {
        this.timedOut = true;
        logger.warn(`agent pid ${this.pid} ran past ${opts.timeoutMs} ms: stopping it`);
        this.terminate();
      }, opts.timeoutMs);
    }
    if (opts.signal?.aborted) this.cancel();
    else opts.signal?.addEventListener("abort", this.onAbort, { once: true });
    void proc.exited.then(() => {
      this.clearTimers();
      // Cancelled or timed out and the agent is gone: whatever it started goes now, not after the grace.
      if (this.killTimer) {
        clearTimeout(this.killTimer);
        this.signalGroup("SIGKILL");
      }
    });
  }

  /** The next read's parsed events (never empty), or undefined at the end of stdout. Serialised: one reader at a time. */
  private pull(): Promise<AgentEvent[] | undefined> {
    const next = this.pulling.then(async () => {
      while (!this.ended) {
        let r: IteratorResult<string[]>;
        try {
          r = await this.lines.next();
        } catch (err) {
          this.ended = true;
          this.pipe?.close();
          throw err;
        }
        if (r.done) {
          this.ended = true;
          this.pipe?.close();
          break;
        }
        const out: AgentEvent[] = [];
        for (const line of r.value) {
          const ev = parseAgentLine(line);
          if (ev) {
            this.collector.add(ev);
            if (this.collector.unrecoverable && !this.stopped) this.stopUnrecoverable();
            out.push(ev);
          } else if (line.trim() !== "") {
            this.collector.garbageLines++;
            logger.debug(`agent pid ${this.pid}: ignoring a line that is not a stream-json event: ${line.slice(0, 200)}`);
          }
        }
        if (out.length > 0) return out;
      }
      return undefined;
    });
    this.pulling = next.catch(() => undefined);
    return next;
  }

  events(): AsyncGenerator<AgentEvent> {
    const batches = this.batches();
    return (async function* () {
      for await (const batch of batches) yield* batch;
    })();
  }

  batches(): AsyncGenerator<AgentEvent[]> {
    if (this.iterating) throw new Error("the events of an agent run can be iterated only once");
    // Registered now, not at the first next(): a wait() called meanwhile must leave the events to us.
    let done!: () => void;
    this.iterating = new Promise<void>((r) => (done = r));
    const pull = () => this.pull();
    return (async function* () {
      try {
        for (;;) {
          const batch = await pull();
          if (batch === undefined) return;
          yield batch;
        }
      } finally {
        done();
      }
    })();
  }

  wait(): Promise<AgentOutcome> {
    this.outcome ??= (async () => {
      if (this.iterating) await this.iterating;
      while ((await this.pull()) !== undefined) {}
      const exitCode = await this.proc.exited;
      const stderrTail = await this.stderr;
      this.clearTimers();
      this.opts.signal?.removeEventListener("abort", this.onAbort);
      const signal = this.proc.signalCode === null ? null : String(this.proc.signalCode);
      return this.collector.finish({
        exitCode: signal === null ? exitCode : null,
        signal,
        timedOut: this.timedOut,
        timeoutMs: this.opts.timeoutMs,
        cancelled: this.cancelled,
        stderrTail,
      });
    })();
    return this.outcome;
  }

  cancel(): void {
    if (this.cancelled || this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.cancelled = true;
    this.terminate();
  }

  /** The CLI would retry a refused key for minutes: stop it now; the outcome says why. */
  private stopUnrecoverable(): void {
    this.stopped = true;
    const r = this.collector.unrecoverable!;
    logger.warn(`agent pid ${this.pid}: the model API answered ${r.error_status ?? ""} ${r.error}, which retrying cannot fix: stopping it`);
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.terminate();
  }

  private terminate(): void {
    if (this.killTimer) return;
    this.signalGroup("SIGTERM");
    this.killTimer = setTimeout(() => {
      if (this.proc.exitCode === null && this.proc.signalCode === null) {
        logger.warn(`agent pid ${this.pid} ignored SIGTERM for ${this.grace()} ms: sending SIGKILL`);
      }
      // The group, even if the leader is gone: its tools may still be running.
      this.signalGroup("SIGKILL");
    }, this.grace());
  }

  private grace(): number {
    return this.opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  }

  private signalGroup(sig: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, sig);
    } catch {
      try {
        this.proc.kill(sig);
      } catch {
        // already gone
      }
    }
  }

  private clearTimers(): void {
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    this.timeoutTimer = undefined;
  }
}

/** Reads a stream to its end, keeping only its last `max` bytes (decoded). */
async function tail(stream: ReadableStream<Uint8Array>, max: number): Promise<string> {
  let kept = new Uint8Array(0);
  for await (const chunk of stream) {
    const merged = new Uint8Array(Math.min(kept.length + chunk.length, max));
    const fromChunk = Math.min(chunk.length, max);
    const fromKept = merged.length - fromChunk;
    merged.set(kept.subarray(kept.length - fromKept), 0);
    merged.set(chunk.subarray(chunk.length - fromChunk), fromKept);
    kept = merged;
  }
  return new TextDecoder().decode(kept);
}
