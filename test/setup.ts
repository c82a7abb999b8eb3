// bun test preload: keep in-process service logs quiet unless LOG_LEVEL asks for them, and keep
// the run's temp files in one folder that goes when the run ends.
import { afterAll } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogLevel } from "../src/common/logger";

setLogLevel(Number(process.env.LOG_LEVEL ?? 1));

// Tests make their folders under os.tmpdir() (vaults, data dirs, bare repos, homes), and the
// processes they start with this environment do too. A full run made ~2,000 of them, ~2.6 GB,
// and left them behind; now they all live under one folder for the run, removed after the last
// test (KEEP_TEST_TMP=1 keeps it to look at): an afterAll in a preload runs once, after every file.
const runTmp = mkdtempSync(join(tmpdir(), "brain-test-run-"));
process.env.TMPDIR = runTmp;
afterAll(() => {
  if (process.env.KEEP_TEST_TMP) {
    console.error(`test temp files kept in ${runTmp}`);
    return;
  }
  // Removed by a detached `rm -rf` that outlives the run: removing ~2,000 folders here took a
  // minute on a busy disk, past the hook's timeout, failing a run whose tests had all passed.
  try {
    Bun.spawn(["rm", "-rf", runTmp], { stdio: ["ignore", "ignore", "ignore"], detached: true }).unref();
  } catch (err) {
    console.error(`could not remove ${runTmp}: ${(err as Error).message}`);
  }
});
