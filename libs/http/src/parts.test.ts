import amqp from 'amqplib';
import axios from 'axios';
import { Schema, connectDb, type Connection } from '@smartlock/db';
import { createBroker, type ExchangeDef, type QueueDef } from '@smartlock/messaging';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import { collections, consumer, part, routes, startService, topology } from './index';

const EX: ExchangeDef = { name: 'parts-test.events', type: 'topic' };
const Q: QueueDef = { name: 'parts-test.things', exchange: EX, bindings: ['thing.#'] };
const OUT: QueueDef = { name: 'parts-test.out', exchange: EX, bindings: ['out.#'] };

describe('startService: an app built from declared parts (docs/adr/0110)', () => {
  const { logger, text } = captureLogger('parts-test');

  describe('with its database and broker', () => {
    const dbName = uniqueDbName('parts');
    let vhost: TestVhost;
    let db: Connection;
    beforeAll(async () => {
      vhost = await createVhost('parts');
      db = await connectDb({ url: MONGO_URL, dbName, logger });
    });
    afterAll(async () => {
      await db?.close();
      await vhost?.remove();
      await dropDatabases(dbName);
    });

    it('starts the parts in order once both are connected, serves requests after the last, and stops them in reverse with the broker still open', async () => {
      const seen: string[] = [];
      const handled: unknown[] = [];
      const service = await startService({
        name: 'parts-test',
        port: 0,
        logger,
        mongo: { url: MONGO_URL, dbName },
        amqp: { url: vhost.url },
        parts: (ctx) => [
          collections([ctx.db.model('Thing', new Schema({ key: { type: String, unique: true } }))]),
          topology({ exchanges: [EX], queues: [OUT] }),
          part('task', 'first', {
            start: () => void seen.push(`start first: broker ${ctx.broker.isReady() ? 'ready' : 'not ready'}`),
            stop: () => void seen.push('stop first'),
          }),
          consumer<{ n: number }>(Q, async (msg) => void handled.push(msg)),
          part('task', 'last', {
            start: () => void seen.push('start last'),
            // The consumers have stopped, the broker still publishes: a relay's last round is not lost.
            stop: async () => {
              await ctx.broker.publish(EX.name, 'out.bye', { bye: true });
              seen.push('stop last: published');
            },
          }),
          routes('hello', (r) => r.get('/hello', (_req, res) => void res.json({ seen }))),
        ],
      });
      const publisher = createBroker({ url: vhost.url, logger, connectionName: 'parts-test publisher' });
      try {
        // Every part had started when the first request could arrive.
        expect((await axios.get(`${service.url}/hello`)).data).toEqual({ seen: ['start first: broker ready', 'start last'] });
        expect(await db.collection('things').indexExists('key_1')).toBe(true);
        await publisher.connect();
        await publisher.publish(EX.name, 'thing.one', { n: 1 });
        await waitFor(() => handled.length === 1, { what: 'the consumer part to take the message' });

        await service.stop();
        expect(seen).toEqual(['start first: broker ready', 'start last', 'stop last: published', 'stop first']);
        // The message published in the last part's stop is in its queue; nothing the stopped consumer could take.
        const conn = await amqp.connect(vhost.url);
        try {
          expect((await (await conn.createChannel()).checkQueue(OUT.name)).messageCount).toBe(1);
        } finally {
          await conn.close();
        }
        expect(
          JSON.parse(
            text()
              .split('\n')
              .find((l) => l.includes('"service started"')) ?? '{}',
          ).parts,
        ).toEqual(['collections things', `topology ${EX.name}, ${OUT.name}`, 'task first', `consumer ${Q.name}`, 'task last', 'routes hello']);
      } finally {
        await publisher.close(0);
        await service.stop();
      }
    });
  });

  it('a part that hangs in its stop holds the stop to SHUTDOWN_TIMEOUT_MS, not past it, and the parts before it are still stopped', async () => {
    const stopped: string[] = [];
    const shutdownTimeoutMs = 800;
    const service = await startService({
      name: 'parts-test',
      port: 0,
      logger,
      shutdownTimeoutMs,
      parts: () => [
        part('timer', 'a', { stop: () => void stopped.push('a') }),
        part('relay', 'b', { stop: () => stopped.push('b (hangs)') && new Promise(() => undefined) }),
        part('timer', 'c', { stop: () => void stopped.push('c') }),
      ],
    });
    const t0 = Date.now();
    await service.stop();
    const tookMs = Date.now() - t0;
    expect(stopped).toEqual(['c', 'b (hangs)', 'a']);
    expect(tookMs).toBeGreaterThanOrEqual(shutdownTimeoutMs - 50);
    expect(tookMs).toBeLessThan(shutdownTimeoutMs + 300);
    expect(text()).toContain('stopped at the shutdown deadline');
  });

  it('a part that fails to start stops the ones started before it, in reverse, and the start fails with its error', async () => {
    const seen: string[] = [];
    const started = startService({
      name: 'parts-test',
      port: 0,
      logger,
      parts: () => [
        part('task', 'a', { start: () => seen.push('start a'), stop: () => seen.push('stop a') }),
        part('task', 'b', { start: () => seen.push('start b'), stop: () => seen.push('stop b') }),
        part('task', 'c', {
          start: () => {
            throw new Error('c cannot start');
          },
          stop: () => seen.push('stop c'),
        }),
        part('task', 'd', { start: () => seen.push('start d') }),
      ],
    });
    await expect(started).rejects.toThrow('c cannot start');
    expect(seen).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });
});
