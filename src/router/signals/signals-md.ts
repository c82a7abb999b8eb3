// signals.md at the moment a signal is recorded (issue 16 part 5: an emergency is in
// signals.md when it is recorded, not at the next tick). The list is the live signals now; it
// counts as swept (the `swept` stamp moves) only when no open signal is overdue for the tick's
// TTL sweep, else the previous stamp stays and the pipeline keeps reporting the sweep as due.
import { join } from "node:path";
import { writeFileAtomicSync } from "../../common/atomic-write";
import { splitFrontmatter } from "../index/document";
import { SIGNALS_FILE, signalsMarkdown } from "../tick/feed-entries";
import { readTextOrNull } from "../vault/quiet-fs";
import { withVaultLock } from "../vault/vault-lock";
import { compareSignals, isLive, readSignals } from "./signal-files";

export async function writeSignalsMdNow(vault: string, ttlHours: number, asOf: Date): Promise<void> {
  const path = join(vault, SIGNALS_FILE);
  await withVaultLock(`${path}.lock`, async () => {
    const all = await readSignals(vault);
    const live = all.filter((s) => isLive(s, asOf, ttlHours)).sort(compareSignals);
    const overdue = all.some((s) => s.status === "open" && !isLive(s, asOf, ttlHours));
    const previous = sweptOf(path);
    const swept = overdue ? (typeof previous === "string" ? new Date(previous) : undefined) : asOf;
    writeFileAtomicSync(path, signalsMarkdown(live, { asOf, ttlHours, swept }));
  });
}

/** The `swept` stamp of the signals.md at `path`, if any. */
function sweptOf(path: string): unknown {
  const text = readTextOrNull(path);
  return text === null ? undefined : splitFrontmatter(text).data.swept;
}
