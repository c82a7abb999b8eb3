// The commit a checkout is at, cheaply: agent mode asks before every turn whether the hub moved
// (a `service-cli hooks sync` behind the service's back).
import { readFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The hub checkout's commit, read from .git (HEAD, its loose ref, else packed-refs) without a
 * process per turn; `git rev-parse` when the layout is anything else. undefined when the
 * directory is no git checkout (SERVICE_HUB_PATH may be a plain directory).
 */
export async function gitHead(dir: string): Promise<string | undefined> {
  const sha = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
  try {
    const head = (await readFile(join(dir, ".git", "HEAD"), "utf8")).trim();
    if (sha.test(head)) return head;
    const ref = /^ref: (refs\/[^\s]+)$/.exec(head)?.[1];
    if (ref && !ref.includes("..")) {
      const loose = await readFile(join(dir, ".git", ref), "utf8").then(
        (t) => t.trim(),
        () => undefined,
      );
      if (loose && sha.test(loose)) return loose;
      const packed = await readFile(join(dir, ".git", "packed-refs"), "utf8").catch(() => "");
      const line = packed.split("\n").find((l) => l.endsWith(` ${ref}`));
      const found = line?.split(" ")[0];
      if (found && sha.test(found)) return found;
    }
  } catch {
    // no .git directory here: ask git
  }
  try {
    const proc = Bun.spawn(["git", "rev-parse", "--verify", "--quiet", "HEAD"], { cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "ignore" });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    return code === 0 ? out.trim() || undefined : undefined;
  } catch {
    return undefined; // no such directory
  }
}
