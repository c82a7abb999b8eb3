// kubectl, the Kubernetes client the agents command drives (never called while the backend is
// off). Captured runs for discovery and pod actions; inherited stdio for what a person watches.
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function kubectl(args: string[], opts: { timeoutMs?: number } = {}): Promise<KubectlResult> {
  let proc;
  try {
    proc = Bun.spawn(["kubectl", ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: opts.timeoutMs ?? 60_000 });
  } catch {
    return { code: 127, stdout: "", stderr: "kubectl is not installed (or not on PATH): the Kubernetes backend needs it" };
  }
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** `-n NS` when a namespace is named; kubectl's current one otherwise. */
export const nsArgs = (namespace: string | undefined): string[] => (namespace ? ["-n", namespace] : []);
