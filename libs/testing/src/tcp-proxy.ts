import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections accepted since start (a reconnect after `restore()` shows here). */
  connections: () => number;
  /**
   * The network between the clients and the target goes away: every open connection is destroyed
   * and new ones are refused (the listener is closed), as a database behind a broken link.
   */
  cut(): Promise<void>;
  /** Sets the reply latency (only a proxy started with `replyLatencyMs` has one). */
  setReplyLatency(ms: number): void;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A TCP proxy in front of a server we must not disturb (the shared database or broker), so a test
 * can make that server unreachable for its own clients only, or slow (`replyLatencyMs`: every reply
 * reaches the client that much later, in order, as over a long link or from a busy client process).
 */
export async function startTcpProxy(target: { host: string; port: number }, opts: { replyLatencyMs?: number } = {}): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let accepted = 0;
  let server: net.Server | undefined;
  let port = 0;
  let latency = opts.replyLatencyMs;

  function onConnection(client: net.Socket) {
    accepted += 1;
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream);
    if (latency === undefined) upstream.pipe(client);
    else {
      // in order even when the latency is lowered meanwhile: a chunk never overtakes an earlier one
      let delivered = Promise.resolve();
      upstream.on('data', (chunk: Buffer) => {
        const due = Date.now() + (latency ?? 0);
        delivered = delivered.then(async () => {
          if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
          if (client.writable) client.write(chunk);
        });
      });
    }
  }

  async function listen() {
    const srv = net.createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => resolve());
    });
    port = (srv.address() as net.AddressInfo).port;
    server = srv;
  }

  async function cut() {
    const srv = server;
    server = undefined;
    for (const s of open) s.destroy();
    open.clear();
    if (srv) await new Promise<void>((resolve) => srv.close(() => resolve()));
  }

  await listen();
  return {
    port,
    connections: () => accepted,
    setReplyLatency: (ms: number) => {
      if (latency === undefined) throw new Error('startTcpProxy: a reply latency needs replyLatencyMs at start');
      latency = ms;
    },
    cut,
    restore: async () => {
      if (!server) await listen();
    },
    stop: cut,
  };
}
