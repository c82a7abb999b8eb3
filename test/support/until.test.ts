// The one poller: it hands back what the probe found, gives up by name at its deadline, and
// lets an error from the probe through at once instead of polling past it.
import { describe, expect, it } from "bun:test";
import { until } from "./until";

describe("until()", () => {
  it("returns the probe's first answer that is not undefined, null or false", async () => {
    let calls = 0;
    const found = await until(() => (++calls < 3 ? undefined : { calls }), { every: 1 });
    expect(found).toEqual({ calls: 3 });
    expect(await until(() => 0, { every: 1 })).toBe(0);
  });

  it("fails after its deadline, naming what it waited for and what was seen then", async () => {
    const seen = ["queued"];
    const err = await until(() => false, { ms: 30, every: 5, what: () => `the job to finish; last seen ${seen.join(",")}` }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe("timed out after 30 ms waiting for the job to finish; last seen queued");
  });

  it("passes a probe's error on at once", async () => {
    const started = Date.now();
    const err = await until(() => {
      throw new Error("the fixture exited");
    }).catch((e: Error) => e);
    expect((err as Error).message).toBe("the fixture exited");
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
