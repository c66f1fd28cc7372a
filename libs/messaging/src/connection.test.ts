import { captureLogger, createVhost, freePort, startTcpProxy, TcpProxy, TestVhost, waitFor } from '@smartlock/testing';
import { Broker, brokerUrls, connectAny, createBroker, safeUrl } from './index';
import { ExchangeDef, QueueDef } from './topology';

const EX: ExchangeDef = { name: 'test.events', type: 'topic' };
const Q: QueueDef = { name: 'test-app.events', exchange: EX, bindings: ['thing.#'] };

describe('AMQP_URL as a list of nodes', () => {
  it('splits on commas and hides every password in logs', () => {
    expect(brokerUrls('amqp://a:1@h1:5672/v, amqp://a:1@h2:5673/v')).toEqual(['amqp://a:1@h1:5672/v', 'amqp://a:1@h2:5673/v']);
    expect(safeUrl('amqp://a:s3cret@h1:5672/v,amqp://b:t0p@h2/v')).toBe('amqp://h1:5672/v,amqp://h2/v');
  });

  it('connectAny fails only when no node answers, naming each without its password', async () => {
    const dead = [`amqp://u:hunter2@127.0.0.1:${await freePort()}`, `amqp://u:hunter2@127.0.0.1:${await freePort()}`];
    const err = await connectAny(dead).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toContain(`127.0.0.1:${new URL(dead[0]).port}: `);
    expect(err?.message).toContain(`127.0.0.1:${new URL(dead[1]).port}: `);
    expect(err?.message).not.toContain('hunter2');
  });
});

/**
 * Two "nodes" that are two TCP proxies to the shared broker (which must never be stopped): a proxy
 * cut is a node gone, for this test's clients only.
 */
describe('a broker on several nodes (real broker behind two proxies)', () => {
  let vhost: TestVhost;
  let nodes: TcpProxy[];
  let broker: Broker | undefined;
  const { logger, lines } = captureLogger('messaging-nodes');
  const viaProxy = (p: TcpProxy) => {
    const u = new URL(vhost.url);
    u.port = String(p.port);
    return u.toString();
  };
  const connectedVia = () => lines.filter((l) => l.includes('"broker connected"')).map((l) => new URL(JSON.parse(l).url).port);

  beforeEach(async () => {
    vhost = await createVhost('nodes');
    const target = new URL(vhost.url);
    nodes = [
      await startTcpProxy({ host: target.hostname, port: Number(target.port || 5672) }),
      await startTcpProxy({ host: target.hostname, port: Number(target.port || 5672) }),
    ];
    lines.length = 0;
  });
  afterEach(async () => {
    await broker?.close(500);
    await Promise.all(nodes.map((n) => n.stop()));
    await vhost.remove();
  });

  it('starts on the first node that answers, in the order given', async () => {
    const down = `amqp://guest:guest@127.0.0.1:${await freePort()}`;
    broker = createBroker({ url: `${down},${viaProxy(nodes[1])},${viaProxy(nodes[0])}`, logger, connectionName: 'nodes test', connectTimeoutMs: 5000 });
    await broker.connect();
    expect(connectedVia()).toEqual([String(nodes[1].port)]);
    expect(nodes[0].connections()).toBe(0);
  });

  // A node that dropped its clients (stopping, in maintenance, paused in a minority) may still accept
  // connections: the client moves to the next node rather than back to it, and round the list.
  it('a connection lost: consumes and publishes through the next node, even when the lost one still accepts, and back round the list', async () => {
    broker = createBroker({
      url: `${viaProxy(nodes[0])},${viaProxy(nodes[1])}`,
      logger,
      connectionName: 'nodes test',
      reconnectMinMs: 100,
      reconnectMaxMs: 500,
    });
    const seen: number[] = [];
    await broker.declareExchanges([EX]);
    await broker.consume<{ id: number }>(Q, async (p) => void seen.push(p.id));
    await broker.connect();
    await broker.publish(EX.name, 'thing.created', { id: 1 });
    await waitFor(() => seen.includes(1), { what: 'the first message' });

    await nodes[0].cut();
    await nodes[0].restore();
    await waitFor(() => connectedVia().length === 2 && broker?.isReady(), { what: 'a connection through the second node', timeoutMs: 10_000 });
    await broker.publish(EX.name, 'thing.created', { id: 2 });
    await waitFor(() => seen.includes(2), { what: 'a message through the second node' });

    await nodes[1].cut();
    await nodes[1].restore();
    await waitFor(() => connectedVia().length === 3 && broker?.isReady(), { what: 'a connection through the first node again', timeoutMs: 10_000 });
    await broker.publish(EX.name, 'thing.created', { id: 3 });
    await waitFor(() => seen.includes(3), { what: 'a message through the first node again' });

    expect(connectedVia()).toEqual([String(nodes[0].port), String(nodes[1].port), String(nodes[0].port)]);
    const lost = lines.filter((l) => l.includes('broker connection lost')).map((l) => new URL(JSON.parse(l).url).port);
    expect(lost).toEqual([String(nodes[0].port), String(nodes[1].port)]);
    expect(lines.join('\n')).not.toContain('guest:guest');
  });
});
