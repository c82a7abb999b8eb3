// A TCP relay on loopback that a test can cut and restore: the service talks to Redis through
// it, and cut() is a Redis outage as the service sees it (connections dropped, new ones refused).
import type { Socket, TCPSocketListener } from "bun";

export interface TcpRelay {
  port: number;
  /** Drops every connection and stops listening. */
  cut(): void;
  /** Listens again on the same port. */
  restore(): void;
  stop(): void;
}

type Pair = { upstream?: Socket<Pair>; pending: Uint8Array[]; client?: Socket<Pair> };

export function startTcpRelay(target: { host: string; port: number }): TcpRelay {
  const clients = new Set<Socket<Pair>>();
  let listener: TCPSocketListener<Pair> | undefined;
  let port = 0;

  const listen = () => {
    listener = Bun.listen<Pair>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(client) {
          clients.add(client);
          const pair: Pair = { pending: [], client };
          client.data = pair;
          void Bun.connect<Pair>({
            hostname: target.host,
            port: target.port,
            data: pair,
            socket: {
              open(upstream) {
                pair.upstream = upstream;
                for (const chunk of pair.pending.splice(0)) upstream.write(chunk);
              },
              data(_upstream, chunk) {
                pair.client?.write(chunk);
              },
              close() {
                pair.client?.end();
              },
              error() {
                pair.client?.end();
              },
            },
          }).catch(() => client.end());
        },
        data(client, chunk) {
          const pair = client.data;
          if (pair.upstream) pair.upstream.write(chunk);
          else pair.pending.push(new Uint8Array(chunk));
        },
        close(client) {
          clients.delete(client);
          client.data?.upstream?.end();
        },
        error(client) {
          clients.delete(client);
          client.data?.upstream?.end();
        },
      },
    });
    port = listener.port;
  };
  listen();

  const cut = () => {
    listener?.stop(true);
    listener = undefined;
    for (const c of clients) {
      c.data?.upstream?.terminate();
      c.terminate();
    }
    clients.clear();
  };
  return {
    get port() {
      return port;
    },
    cut,
    restore: listen,
    stop: cut,
  };
}
