// The one error idiom of both CLIs. A command body throws — usage() for a mistake in what the
// user typed, fail() for a failure it can name, or whatever a client call raises — and runCli
// (cli/_shared.ts) prints one line on stderr and exits with the spec's code: "Exit codes: 0
// success, 1 failure, 2 invalid input". A command whose outcome is itself a code (check's
// degraded, a job that failed) returns it. No citty or consola here: the entry points print.
import { ApiError, ConnectionError } from "../src/common/client/http-client";

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** What the user typed is wrong: exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A failure the command can name in one line: exit 1 unless it says otherwise. */
export class CommandError extends Error {
  override name = "CommandError";
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
  }
}

export function usage(message: string): never {
  throw new UsageError(message);
}

export function fail(message: string, exitCode: number = EXIT.failure): never {
  throw new CommandError(message, exitCode);
}

/** Who a CLI talks to, in the words its failure lines use. */
export interface Server {
  /** "router", "orchestrator" */
  name: string;
  /** "router token", "API key" */
  credential: string;
  /** where the credential is set: "set KB_ROUTER_TOKEN, …" */
  setCredential: string;
  /** what to do when it does not answer: "start it with `service-cli serve`, …" */
  whenDown: string;
}

let target: { server: Server; credentialFrom?: string } | undefined;

/** Each CLI's client() says whom it calls and where the credential came from (undefined: none). */
export function connecting(server: Server, credentialFrom: string | undefined): void {
  target = { server, credentialFrom };
}

function reasonOf(err: ConnectionError): string {
  const cause = err.cause as { code?: string; name?: string; message?: string } | undefined;
  if (cause?.name === "TimeoutError" || cause?.name === "AbortError") return "no answer in time";
  if (cause?.code === "ECONNREFUSED" || /refused|unable to connect/i.test(cause?.message ?? "")) return "connection refused";
  return cause?.code ?? cause?.message ?? "no answer";
}

/**
 * The line and exit code for anything a command threw. The same shapes for both CLIs:
 *   the <server> does not answer at <url> (<reason>): <what to do>
 *   no <credential>: <where to set it>
 *   the <credential> from <where> was refused (401 <code>): <where to set it>
 *   <status> <code>: <the server's message>          (exit 2 for a 400: the input was wrong)
 */
export function failure(err: unknown): { message: string; exitCode: number } {
  const server = target?.server;
  if (err instanceof ConnectionError) {
    const what = server ? `the ${server.name}` : "the server";
    return { message: `${what} does not answer at ${err.baseUrl} (${reasonOf(err)})${server ? `: ${server.whenDown}` : ""}`, exitCode: EXIT.failure };
  }
  if (err instanceof ApiError) {
    if (err.status === 401 && server) {
      const message = target?.credentialFrom
        ? `the ${server.credential} from ${target.credentialFrom} was refused (401 ${err.code}): ${server.setCredential}`
        : `no ${server.credential}: ${server.setCredential}`;
      return { message, exitCode: EXIT.failure };
    }
    // A 400's message already names every failing field.
    return { message: `${err.status} ${err.code}: ${err.message}`, exitCode: err.status === 400 ? EXIT.usage : EXIT.failure };
  }
  if (err instanceof UsageError) return { message: err.message, exitCode: EXIT.usage };
  if (err instanceof CommandError) return { message: err.message, exitCode: err.exitCode };
  // A setting the user got wrong (the services' ConfigError, service-cli's CliConfigError).
  if ((err as Error)?.name === "ConfigError") return { message: (err as Error).message, exitCode: EXIT.usage };
  return { message: (err as Error)?.message ?? String(err), exitCode: EXIT.failure };
}
