// Run as root, Claude Code refuses `--permission-mode bypassPermissions` (the code profile's
// mode: "--dangerously-skip-permissions cannot be used with root/sudo privileges") unless
// IS_SANDBOX=1 says the machine is a sandbox. The service says so once at start-up, and a job
// the CLI refused for it fails with the same sentence.

/** What the CLI prints (stderr) when asked to bypass permissions as root without IS_SANDBOX=1. */
export const ROOT_REFUSAL = /cannot be used with root\/sudo privileges/i;

/** One line for the start-up log and for the error of a job the CLI refused for it. */
export const ROOT_WITHOUT_SANDBOX =
  "the service runs as root without IS_SANDBOX=1: the agent CLI refuses --permission-mode bypassPermissions as root, " +
  "so every job of a profile with that mode (the code profile) fails at spawn; run the service as a non-root user, " +
  "or set IS_SANDBOX=1 when it runs sandboxed (a container or VM of its own)";

/** True when this process would have its bypassPermissions agents refused. */
export function rootWithoutSandbox(env: Record<string, string | undefined>, uid = process.getuid?.()): boolean {
  return uid === 0 && env.IS_SANDBOX !== "1";
}
