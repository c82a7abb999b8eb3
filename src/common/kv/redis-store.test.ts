import { describe, expect, it } from "bun:test";
import type { Socket } from "bun";
import { describeWithRedis, openRedisStore, REDIS_URL } from "../../../test/support/kv.ts";
import { until } from "../../../test/support/until.ts";
import { createRedisStore, maskRedisUrl } from "./redis-store.ts";

/** A loopback TCP relay we can cut, to see the client lose Redis without stopping Redis. */
function startTcpProxy(port: number, hostname: string, targetPort: number) {
  type Conn = { upstream?: Promise<Socket<undefined>> };
  return Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port,
    socket: {
      open(client) {
        client.data = {
          upstream: Bun.connect({
            hostname,
            port: targetPort,
            socket: { data: (_, chunk) => void client.write(chunk), close: () => void client.end(), error: () => void client.end() },
          }),
        };
        client.data.upstream?.catch(() => void client.end());
      },
      data: (client, chunk) => void client.data.upstream?.then((up) => up.write(chunk)),
      close: (client) =>
        void client.data.upstream?.then(
          (up) => up.end(),
          () => {},
        ),
    },
  });
}

describeWithRedis("redis store", () => {
  it("does not see keys under another prefix", async () => {
    const [a, b] = await Promise.all([openRedisStore(), openRedisStore()]);
    try {
      await a.store.set("shared-name", "a");
      expect(await b.store.get("shared-name")).toBeNull();
      expect(await b.store.keys("")).toEqual([]);
    } finally {
      await Promise.all([a.cleanup(), b.cleanup()]);
    }
  });

  it("survives losing the connection: not answering while down, working once back", async () => {
    const upstream = new URL(REDIS_URL);
    let port = 0; // the first relay picks a free port; the second reopens the same one
    const relay = () => {
      const listener = startTcpProxy(port, upstream.hostname, Number(upstream.port || 6379));
      port = listener.port;
      return listener;
    };
    let proxy = relay();
    const viaProxy = new URL(REDIS_URL);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const h = await openRedisStore(viaProxy.toString());
    try {
      await h.store.set("k", "v");
      proxy.stop(true);
      await until(async () => !(await h.store.ping()));
      await expect(h.store.get("k")).rejects.toThrow(); // fails, rather than hanging until Redis returns

      proxy = relay();
      await until(() => h.store.ping(), 10_000);
      expect(await h.store.get("k")).toBe("v");
    } finally {
      await h.cleanup();
      proxy.stop(true);
    }
  });
});

describe("createRedisStore when Redis is not there", () => {
  it("rejects quickly, naming REDIS_URL with the password masked", async () => {
    const started = Date.now();
    const url = "redis://user:s3cret-pass@127.0.0.1:1";
    const err = await createRedisStore({ url, keyPrefix: "x" }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toContain("REDIS_URL=redis://user:****@127.0.0.1:1");
    expect(err?.message).not.toContain("s3cret-pass");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("masks passwords in URLs it cannot parse too", () => {
    expect(maskRedisUrl("redis://:pw@[bad")).not.toContain("pw");
    expect(maskRedisUrl("redis://127.0.0.1:6379")).toBe("redis://127.0.0.1:6379");
  });
});
