import amqp from 'amqplib';
import { QUEUES } from '@smartlock/messaging';
import { captureLogger } from '@smartlock/testing';
import { WorkerStack, bookingEvent, companyId, publishEvent, waitFinal, workerStack } from '../test-support/harness';

jest.setTimeout(60_000);

/** What really is in a durable queue (read and acked with a plain channel): a queue or dead-letter dump. */
async function dump(url: string, queue: string): Promise<string[]> {
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  const out: string[] = [];
  for (let m = await ch.get(queue, { noAck: true }); m; m = await ch.get(queue, { noAck: true })) out.push(m.content.toString());
  await conn.close();
  return out;
}

describe('access.events carry no credential in clear (MESSAGE_KEY)', () => {
  let s: WorkerStack;
  const { logger } = captureLogger('provisioning-worker');
  const company = companyId();

  beforeAll(async () => {
    s = await workerStack('prov-sealed', logger);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("the bytes on the broker, and those waiting in access-api's queue, hold no lockData, passcode or card number; opened with the key they are all there", async () => {
    const { siteId } = await s.layout.seed(s.app.ctx.db, company, [{ name: '101' }]);
    const ev = await publishEvent(
      s.pub,
      bookingEvent(company, siteId, 'ref-sealed', 1, 'BOOKING_CREATE', { room: '101', access_types: ['EKEY', 'PASSCODE', 'CARD'], card_id: 'C0FFEE42' }),
    );
    expect(await waitFinal(s.t, ev.event_id)).toMatchObject({ status: 'COMPLETED', message: null });

    const provisioned = s.t.access.find((a) => a.event_id === ev.event_id && a.type === 'access.provisioned');
    const secrets = [
      provisioned?.credentials.find((c) => c.type === 'EKEY')?.lockData,
      provisioned?.credentials.find((c) => c.type === 'PASSCODE')?.passcode,
      provisioned?.credentials.find((c) => c.type === 'CARD')?.card_id,
    ];
    expect(secrets).toEqual([expect.any(String), expect.stringMatching(/^\d+$/), 'C0FFEE42']);

    const onTheWire = s.t.accessBytes.filter((b) => b.includes(ev.event_id));
    // Declared by the worker, no consumer here: what access-api (or a dump of it) would read.
    const queued = (await dump(s.vhost.url, QUEUES.accessApiAccessEvents.name)).filter((b) => b.includes(ev.event_id));
    expect(onTheWire).toHaveLength(1);
    expect(queued).toHaveLength(1);
    for (const bytes of [...onTheWire, ...queued]) {
      expect(bytes).toContain('"sealed"');
      for (const secret of secrets) expect(bytes).not.toContain(secret as string);
    }
  });
});
