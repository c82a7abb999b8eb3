// The agent's stdout as a real pipe. Bun.spawn's "pipe" is a unix socketpair, where every write
// is a socket buffer of its own however short the write: Claude Code writes a line at a time,
// so a burst of deltas fills the socket and stalls the agent, and the reader pays to take apart
// one buffer per line, more than parsing the line costs. A pipe packs the writes into its pages,
// so one read takes a burst of lines in one copy.
// pipe2(2) comes from libc through bun:ffi (Bun has no API for it); where that is not available
// (not Linux, no glibc) the run falls back to Bun's socketpair.

import { dlopen, FFIType, ptr } from "bun:ffi";
import { closeSync, fstatSync } from "node:fs";
import { log } from "../../common/logger";

const logger = log("agent");

/** Linux's O_CLOEXEC: neither end leaks into other children (a stray write end would hold EOF back). */
const O_CLOEXEC = 0o2000000;

let pipe2: ((fds: Int32Array) => number) | undefined;
let loaded = false;

function load(): typeof pipe2 {
  if (loaded) return pipe2;
  loaded = true;
  if (process.platform !== "linux") return undefined;
  try {
    const libc = dlopen("libc.so.6", { pipe2: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 } });
    pipe2 = (fds) => libc.symbols.pipe2(ptr(fds), O_CLOEXEC);
  } catch (err) {
    logger.debug(`pipe2 is not available (${(err as Error).message}): the agent's stdout is Bun's socketpair`);
  }
  return pipe2;
}

export interface StdoutPipe {
  /** The write end, for Bun.spawn's stdout; close it (closeWrite) once the child has it. */
  readonly write: number;
  /** The read end as a stream; `close()` releases it once the stream has ended. */
  readonly stream: ReadableStream<Uint8Array>;
  closeWrite(): void;
  /** Closes the read end (idempotent). Only after the stream ended: Bun's reader must be done with the fd. */
  close(): void;
}

/** A fresh pipe for one agent's stdout, or undefined where pipe2 is not available (use stdout: "pipe"). */
export function openStdoutPipe(): StdoutPipe | undefined {
  const make = load();
  if (!make) return undefined;
  const fds = new Int32Array(2);
  if (make(fds) !== 0) return undefined;
  const [read, write] = [fds[0]!, fds[1]!];
  // The pipe's inode: a descriptor is closed only while it is still this pipe, never a number
  // something else has reused (should Bun ever close one of them itself).
  const ino = fstatSync(read).ino;
  const closer = (fd: number) => {
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      try {
        if (fstatSync(fd).ino === ino) closeSync(fd);
      } catch {
        // already closed
      }
    };
  };
  return { write, stream: Bun.file(read).stream(), closeWrite: closer(write), close: closer(read) };
}
