// The conversation → session map on a disk that fills up: the next turn must still resume the
// agent's session, and the map reaches the file once space is back.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { canMountTmpfs, mountTmpfs, type Tmpfs, under } from "../../../test/support/tmpfs";
import { createSessionStore } from "./sessions";

describe.skipIf(!canMountTmpfs)("the session map on a full disk", () => {
  let fs: Tmpfs;
  beforeAll(() => {
    fs = mountTmpfs(2);
  });
  afterAll(async () => {
    await fs.unmount();
  });

  it("answers a mapping the file could not take, and writes it with the next write once space is back", async () => {
    const stateDir = under(fs, "state");
    const store = createSessionStore({ stateDir, ttlSeconds: 3600 });
    await store.set("conv:a", "session-a");
    fs.fill();
    await store.set("conv:b", "session-b");
    expect(await store.get("conv:b")).toBe("session-b");
    expect(await store.get("conv:a")).toBe("session-a");
    const file = join(stateDir, "agent_sessions.json");
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")))).toEqual(["conv:a"]);

    fs.free();
    await store.set("conv:c", "session-c");
    const written = JSON.parse(readFileSync(file, "utf8"));
    expect(Object.fromEntries(Object.entries(written).map(([k, e]) => [k, (e as { session_id: string }).session_id]))).toEqual({
      "conv:a": "session-a",
      "conv:b": "session-b",
      "conv:c": "session-c",
    });
    // A second store over the same file (a restarted service) reads them all.
    const after = createSessionStore({ stateDir, ttlSeconds: 3600 });
    expect(await after.get("conv:b")).toBe("session-b");
  });

  it("a newer mapping of the same conversation wins over the one held in memory", async () => {
    const stateDir = under(fs, "state2");
    const store = createSessionStore({ stateDir, ttlSeconds: 3600 });
    fs.fill();
    await store.set("conv:x", "old");
    fs.free();
    await store.set("conv:x", "new");
    expect(await store.get("conv:x")).toBe("new");
    expect(JSON.parse(readFileSync(join(stateDir, "agent_sessions.json"), "utf8"))["conv:x"].session_id).toBe("new");
  });
});
