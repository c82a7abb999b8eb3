// A promise that rejects when `p` has not settled within `ms`: for calls to a server that may
// hang rather than fail while it comes back (a Redis connection mid-handshake), so a request
// gets an answer it can report or fall back from.
class DeadlineError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = "DeadlineError";
  }
}

export function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineError(what, ms)), ms);
    p.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}
