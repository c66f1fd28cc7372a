import amqp from 'amqplib';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import type { EventStatusMessage } from '@smartlock/contracts';
import { Broker, EXCHANGES, QUEUES, TransientError, createBroker } from '@smartlock/messaging';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';

const ROOT = path.resolve(__dirname, '../../..');
const exec = promisify(execFile);
const WORK = QUEUES.provisioningBookingEvents.name;
const DLQ = `${WORK}.dlq`;

/** The built CLI (dist/tools/dlq.js), as the on-call engineer runs it, on dead letters the real consumer made. */
describe('tools/dlq against a real broker and database', () => {
  const dbName = uniqueDbName('dlq_cli');
  const { logger } = captureLogger('dlq');
  let vhost: TestVhost;
  let worker: Broker;
  let tapConn: amqp.ChannelModel;
  let failing = true;
  const handled: { event_id: string; retryCount: number }[] = [];
  const statuses: EventStatusMessage[] = [];

  async function dlq(...args: string[]) {
    try {
      const { stdout, stderr } = await exec(process.execPath, ['dist/tools/dlq.js', ...args], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, AMQP_URL: vhost.url, MONGO_URL, MONGO_DB: dbName, DLQ_OPERATOR: 'night on-call' },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }
  const json = async (...args: string[]) => {
    const r = await dlq(...args, '--json');
    expect({ code: r.code, stderr: r.stderr.split('\n').filter((l) => l && !/^(reading|replaying) /.test(l)) }).toEqual({ code: 0, stderr: [] });
    return JSON.parse(r.stdout);
  };
  const depth = async () => (await vhost.queue(DLQ))?.messages ?? 0;

  async function deadLetter(company: string, ref: string): Promise<string> {
    const before = await depth();
    const event_id = randomUUID();
    await worker.publish(
      EXCHANGES.bookingEvents.name,
      'booking.create',
      { event_id, company_id: company, reference_id: ref },
      { messageId: event_id, correlationId: `corr-${ref}`, headers: { 'x-event-id': event_id } },
    );
    await waitFor(async () => (await depth()) === before + 1, { what: `${ref} dead-lettered` });
    return event_id;
  }

  const ids: Record<string, string> = {};

  beforeAll(async () => {
    await exec(process.execPath, ['tools/build.mjs', 'tools/dlq'], { cwd: ROOT });
    vhost = await createVhost('dlq-cli');
    worker = createBroker({ url: vhost.url, logger, connectionName: 'worker stand-in' });
    await worker.declareExchanges([EXCHANGES.bookingEvents, EXCHANGES.eventStatus]);
    await worker.consume<{ event_id: string }>(
      QUEUES.provisioningBookingEvents,
      async (body, ctx) => {
        if (failing) throw new TransientError('lock offline (errcode -3002)');
        handled.push({ event_id: body.event_id, retryCount: ctx.retryCount });
      },
      { retryDelaysMs: [10], maxRetries: 3 },
    );
    await worker.connect();
    tapConn = await amqp.connect(vhost.url);
    const ch = await tapConn.createChannel();
    const tap = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(tap.queue, EXCHANGES.eventStatus.name, 'status.#');
    await ch.consume(tap.queue, (m) => m && statuses.push(JSON.parse(m.content.toString())), { noAck: true });
    for (const [company, ref] of [
      ['hotel-1', 'R-1'],
      ['hotel-1', 'R-2'],
      ['hotel-2', 'R-3'],
      ['hotel-2', 'R-4'],
    ])
      ids[ref] = await deadLetter(company, ref);
  });
  afterAll(async () => {
    await worker?.close(0);
    await tapConn?.close().catch(() => undefined);
    await vhost?.remove();
    await dropDatabases(dbName);
  });

  it('queues: every dead-letter queue with its depth and oldest age (text and --json)', async () => {
    const queues = await json('queues');
    expect(queues).toContainEqual({
      queue: WORK,
      dead_letter_queue: DLQ,
      declared: true,
      depth: 4,
      oldest_dead_lettered_at: expect.any(String),
      oldest_age_seconds: expect.any(Number),
    });
    const text = await dlq('queues');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${DLQ.replace(/\./g, '\\.')}\\s+4\\s+\\d+s$`, 'm'));
    expect(text.stdout).toMatch(/^location-api\.booking-events\.dlq\s+0\s+\(not declared yet\)$/m);
  });

  it('list: filtered by company, reason, reference and age; nothing taken away', async () => {
    const byCompany = await json('list', WORK, '--company', 'hotel-2');
    expect(byCompany).toMatchObject({ dead_letter_queue: DLQ, depth: 4, matched: 2 });
    expect(byCompany.messages.map((m: { reference_id: string; reason: string; retry_count: number }) => [m.reference_id, m.reason, m.retry_count])).toEqual([
      ['R-3', 'lock offline (errcode -3002)', 3],
      ['R-4', 'lock offline (errcode -3002)', 3],
    ]);
    expect(
      (await json('list', DLQ, '--reference', 'R-2', '--reason', 'OFFLINE', '--newer-than', '1h')).messages.map((m: { event_id: string }) => m.event_id),
    ).toEqual([ids['R-2']]);
    expect((await json('list', WORK, '--older-than', '1h')).matched).toBe(0);

    const text = await dlq('list', WORK, '--company', 'hotel-1');
    expect(text.stdout).toContain(`2 message(s) in ${DLQ} match (of 4)`);
    expect(text.stdout).toContain(`- message ${ids['R-1']}  event ${ids['R-1']}  company hotel-1  reference R-1`);
    expect(text.stdout).toContain('x-death-reason: lock offline (errcode -3002)');
    expect(text.stdout).toContain('x-correlation-id: corr-R-1');

    expect(await dlq('list', WORK, '--older-than', 'an hour')).toMatchObject({ code: 2, stderr: 'older_than must be a duration such as 90s, 30m, 2h or 7d\n' });
    expect(await dlq('list', 'no-such-queue')).toMatchObject({ code: 1, stderr: 'Dead-letter queue no-such-queue.dlq not found\n' });
    expect(await depth()).toBe(4);
  });

  it('replay: one by id, then a filtered set with progress on stderr; retry_count 0, QUEUED reported', async () => {
    expect(await dlq('replay', WORK)).toMatchObject({ code: 2, stderr: expect.stringMatching(/^Choose what to replay/) });
    expect(await dlq('replay', WORK, '--id', 'nope')).toMatchObject({ code: 1, stderr: expect.stringContaining(`no message nope in ${DLQ}`) });
    failing = false;

    const one = await dlq('replay', WORK, '--id', ids['R-2']);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain(`replayed 1 message(s) from ${DLQ} to ${WORK}: ${ids['R-2']}`);
    expect(one.stdout).toContain('1 booking event(s) set back to QUEUED');
    expect(one.stdout).toMatch(/3 left in provisioning-worker\.booking-events\.dlq; recorded as operation [0-9a-f]{24}/);
    expect(await waitFor(() => handled.find((h) => h.event_id === ids['R-2']), { what: 'R-2 handled' })).toEqual({ event_id: ids['R-2'], retryCount: 0 });
    await waitFor(() => statuses.some((s) => s.event_id === ids['R-2'] && s.status === 'QUEUED'), { what: 'QUEUED for R-2' });

    const set = await dlq('replay', WORK, '--company', 'hotel-2', '--json');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ matched: 2, replayed: 2, statuses_queued: 2, remaining: 1, message_ids: [ids['R-3'], ids['R-4']] });
    // not a terminal: one progress line per batch, the bar filling up
    expect(set.stderr.split('\n').filter((l) => l.startsWith('replaying'))).toEqual([`replaying [${'.'.repeat(30)}] 0/2`, `replaying [${'#'.repeat(30)}] 2/2`]);
    await waitFor(() => ['R-3', 'R-4'].every((r) => handled.some((h) => h.event_id === ids[r] && h.retryCount === 0)), { what: 'R-3 and R-4 handled' });
    expect((await json('list', WORK)).messages.map((m: { reference_id: string }) => m.reference_id)).toEqual(['R-1']);
  });

  it("purge: only with --yes-purge and the dead-letter queue's name; history and show list what was done, by whom", async () => {
    expect(await dlq('purge', WORK)).toMatchObject({ code: 2, stderr: `confirm must be "${DLQ}" to purge it\n` });
    expect(await dlq('purge', WORK, '--yes-purge', WORK)).toMatchObject({ code: 2 });
    expect(await depth()).toBe(1);
    const purged = await dlq('purge', WORK, '--yes-purge', DLQ, '--operator', 'alice');
    expect(purged).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(new RegExp(`^purged 1 message\\(s\\) from ${DLQ.replace(/\./g, '\\.')}; recorded as operation [0-9a-f]{24}\\n$`)),
    });
    expect(await depth()).toBe(0);

    const history = await json('history');
    expect(
      history.map((o: { action: string; operator: string; via: string; counts: { replayed: number; purged: number } }) => [
        o.action,
        o.operator,
        o.via,
        o.counts.replayed + o.counts.purged,
      ]),
    ).toEqual([
      ['purge', 'alice', 'cli', 1],
      ['replay', 'night on-call', 'cli', 2],
      ['replay', 'night on-call', 'cli', 1],
      ['replay', 'night on-call', 'cli', 0],
    ]);
    expect((await json('history', '--action', 'purge', '--queue', DLQ)).map((o: { _id: string }) => o._id)).toEqual([history[0]._id]);
    expect(await json('show', history[1]._id)).toEqual(history[1]);
    const text = await dlq('history', '--limit', '1');
    expect(text.stdout).toMatch(new RegExp(`^\\S+  ${history[0]._id}  purge   ${DLQ.replace(/\./g, '\\.')}  by alice \\(cli\\)  done  purged 1\\n$`));
    expect(await dlq('show', '0123456789abcdef01234567')).toMatchObject({ code: 1, stderr: 'Dead-letter operation 0123456789abcdef01234567 not found\n' });
    expect(await dlq('history', '--limit', 'many')).toMatchObject({ code: 2, stderr: '--limit must be a whole number from 1 to 1000\n' });
    expect(await dlq('frobnicate')).toMatchObject({ code: 2 });
  });
});
