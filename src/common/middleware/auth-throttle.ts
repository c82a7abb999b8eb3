// Failed bearer attempts are limited per client address: past `limit` failures within
// `windowMs`, every refused request from that address answers 429 with Retry-After until the
// window has passed. The edge consults it only for a request whose token was refused, so a right
// token from the same address (another client behind the same proxy) is still served; tokens
// are long random secrets, so the limit is there to bound the noise of a guesser, not its odds.
import { HttpError } from "../errors";

export interface AuthThrottleOptions {
  limit: number;
  windowMs: number;
}

const DEFAULT_AUTH_THROTTLE: AuthThrottleOptions = { limit: 30, windowMs: 60_000 };

interface Window {
  start: number;
  failures: number;
}

export class AuthThrottle {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly opts: AuthThrottleOptions = DEFAULT_AUTH_THROTTLE) {}

  /** Throws 429 when `address` has failed too often in the current window. */
  check(address: string, now = Date.now()): void {
    const w = this.windows.get(address);
    if (!w) return;
    if (now - w.start >= this.opts.windowMs) {
      this.windows.delete(address);
      return;
    }
    if (w.failures >= this.opts.limit) {
      const retryAfter = Math.max(1, Math.ceil((w.start + this.opts.windowMs - now) / 1000));
      throw new HttpError(429, "too_many_auth_failures", `too many failed bearer attempts from this address; retry after ${retryAfter} s`, undefined, {
        "Retry-After": String(retryAfter),
      });
    }
  }

  failed(address: string, now = Date.now()): void {
    const w = this.windows.get(address);
    if (!w || now - w.start >= this.opts.windowMs) this.windows.set(address, { start: now, failures: 1 });
    else w.failures++;
    // Bounded memory: a flood from many addresses drops the oldest windows.
    if (this.windows.size > 100_000) {
      const first = this.windows.keys().next().value;
      if (first !== undefined) this.windows.delete(first);
    }
  }
}
