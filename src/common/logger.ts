// One consola instance for the process; modules take a tagged child. The reporter is ours:
// plain `time [tag] level message` lines, info and below batched into one stdout write every
// FLUSH_MS or FLUSH_BYTES (an access-log line per request must not cost a syscall each, nor a
// flush every event-loop tick), warnings and errors written at once to
// stderr, everything pending written on exit.
import { formatWithOptions } from "node:util";
import { type ConsolaInstance, type ConsolaReporter, createConsola, type LogObject } from "consola";

let pending = "";
let timer: ReturnType<typeof setTimeout> | undefined;
/** How long an info line may wait for company before it is written. */
const FLUSH_MS = 20;
/** Pending output past this is written at once, whatever the timer. */
const FLUSH_BYTES = 64 * 1024;
/** When stdout carries a protocol (MCP over stdio), every log line goes to stderr. */
let stdoutReserved = false;

function flush(): void {
  if (timer !== undefined) {
    clearTimeout(timer);
    timer = undefined;
  }
  if (pending.length === 0) return;
  const out = pending;
  pending = "";
  process.stdout.write(out);
}

function format(obj: LogObject): string {
  const msg = formatWithOptions({ colors: false, breakLength: Infinity }, ...obj.args);
  const tag = obj.tag ? `[${obj.tag}] ` : "";
  const level = obj.type === "log" || obj.type === "info" ? "" : `${obj.type.toUpperCase()} `;
  return `${obj.date.toISOString()} ${tag}${level}${msg}\n`;
}

function emit(line: string, level: number): void {
  if (level <= 1 || stdoutReserved) {
    flush();
    process.stderr.write(line);
    return;
  }
  pending += line;
  if (pending.length > FLUSH_BYTES) flush();
  else if (timer === undefined) {
    timer = setTimeout(flush, FLUSH_MS);
    // A pending log line never keeps the process alive; 'exit' writes it.
    timer.unref();
  }
}

const reporter: ConsolaReporter = {
  log(obj) {
    emit(format(obj), obj.level);
  },
};

process.on("exit", flush);

export const logger: ConsolaInstance = createConsola({
  // LOG_LEVEL is read in main.ts and applied with setLogLevel; tests stay quiet unless asked.
  level: 3,
  reporters: [reporter],
  // Identical lines are real events (two identical requests); never fold them.
  throttle: 0,
});

// consola's withTag copies its options, so a tagged logger made at import time would keep
// the level it was born with: every one is remembered and follows setLogLevel.
const tagged = new Map<string, ConsolaInstance>();

export function setLogLevel(level: number): void {
  logger.level = level;
  for (const child of tagged.values()) child.level = level;
}

export const log = (tag: string): ConsolaInstance => {
  let child = tagged.get(tag);
  if (!child) {
    child = logger.withTag(tag);
    tagged.set(tag, child);
  }
  child.level = logger.level;
  return child;
};

/**
 * One info line in the reporter's format, without consola's per-call work (a log object, a
 * date, argument formatting): the access log's hot path, one line per request.
 */
export function infoLine(tag: string, message: string): void {
  if (logger.level < 3) return;
  emit(`${isoNow()} [${tag}] ${message}\n`, 3);
}

// The access log's timestamp, formatted once per millisecond rather than once per line.
let isoMs = 0;
let isoText = "";
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

/** Keeps stdout for a protocol: from now on every logger (tagged ones too) writes to stderr. */
export function sendLogsToStderr(): void {
  flush();
  stdoutReserved = true;
}
