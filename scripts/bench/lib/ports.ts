// Free loopback ports for benchmark servers: picked at random, then proven free by binding.
const LOW = 20000;
const HIGH = 60000;

/** A TCP port on 127.0.0.1 that nothing listens on right now (random, so parallel runs rarely collide). */
export function freePort(): number {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    try {
      const listener = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
      listener.stop(true);
      return port;
    } catch {
      // taken: try another
    }
  }
  throw new Error(`no free port found in ${LOW}-${HIGH} after 50 attempts`);
}
