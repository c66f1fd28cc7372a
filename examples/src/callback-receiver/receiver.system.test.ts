import type { Express } from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ok, sendBooking, waitForEvent } from '@smartlock/client';
import { launchSystem, System, waitFor } from '@smartlock/testing';
import { onboard } from '../test-support/onboard';
import { Journal, Recorded } from './journal';
import { callbackReceiver } from './receiver';

describe('the example callback receiver, called by the running system', () => {
  let sys: System;
  let dir: string;
  let server: http.Server;
  let receiver: Express; // what the server answers with: replaced to deploy new secrets
  let url: string;
  let journal: Journal;
  let it$: Awaited<ReturnType<typeof onboard>>;

  const stay = { check_in: '2027-04-01T15:00:00Z', check_out: '2027-04-02T11:00:00Z' };
  const book = async (reference_id: string) => {
    const accepted = await sendBooking(it$.ingest, it$.token, { reference_id, action: 'create', room_number: '101', ...stay });
    expect(await waitForEvent(it$.ingest, accepted.eventId, { timeoutMs: 30_000 })).toMatchObject({ status: 'COMPLETED' });
  };
  const recorded = (referenceId: string) =>
    waitFor(async () => (await journal.entries()).filter((e) => e.referenceId === referenceId && e.event === 'access.provisioned').at(0), {
      timeoutMs: 20_000,
      what: `access.provisioned of ${referenceId} recorded`,
    });
  /** The service's own account of its deliveries of a booking (admin API). */
  const deliveries = async (referenceId: string) =>
    (await ok(it$.admin.GET('/admin/v1/companies/{companyId}/deliveries', { params: { path: { companyId: it$.companyId }, query: { referenceId } } }))).data
      .deliveries;
  const post = (app: Express, e: Pick<Recorded, 'body' | 'headers' | 'event'>) =>
    request(app).post('/callbacks').set('Content-Type', 'application/json').set(e.headers).set('X-Service-Event', e.event).send(e.body);

  beforeAll(async () => {
    sys = await launchSystem();
    it$ = await onboard(sys, 'Receiver Example Hotel');
    dir = await mkdtemp(path.join(tmpdir(), 'receiver-'));
    journal = await Journal.open(path.join(dir, 'callbacks.jsonl'));
    server = http.createServer((req, res) => receiver(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`;
  }, 180_000);
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await sys?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  let firstSecret: string;
  let first: Recorded; // a real delivery signed with the first secret

  it('accepts real deliveries, refuses a tampered one, and records a repeat once', async () => {
    const set = await ok(it$.admin.PUT('/admin/v1/companies/{companyId}/callback', { ...it$.company, body: { url, auth: { type: 'hmac' } } }));
    firstSecret = set.secret as string;
    receiver = callbackReceiver({ secret: firstSecret, journal });

    await book('RCV-1');
    first = await recorded('RCV-1');
    expect(first).toMatchObject({ signedWith: 'current', event: 'access.provisioned' });
    // The dispatcher records the answer after the receiver has it: read until it has.
    const delivery = await waitFor(async () => (await deliveries('RCV-1')).find((d: { deliveredAt: string | null }) => d.deliveredAt), {
      timeoutMs: 20_000,
      what: 'the delivery of RCV-1 recorded as delivered',
    });
    expect(delivery).toMatchObject({ deliveryId: first.deliveryId, lastStatusCode: 200, deliveredAt: expect.any(String) });

    // The same signature over other bytes: refused, nothing recorded.
    const tampered = await post(receiver, { ...first, body: first.body.replace('"RCV-1"', '"RCV-2"') });
    expect(tampered.status).toBe(401);
    const unsigned = await post(receiver, { ...first, headers: { ...first.headers, 'webhook-signature': '' } });
    expect(unsigned.status).toBe(401);
    // Replayed to a receiver that never recorded it, later than the library's 5 minutes (the
    // receiver's clock moved on): refused.
    const clock = jest.spyOn(Date, 'now').mockReturnValue(Number(first.headers['webhook-timestamp']) * 1000 + 301_000);
    try {
      expect((await post(callbackReceiver({ secret: firstSecret, journal: await Journal.open(path.join(dir, 'late.jsonl')) }), first)).status).toBe(401);
    } finally {
      clock.mockRestore();
    }

    // The same delivery again (a retry whose first answer was lost; the service redelivers only a
    // dead delivery): answered 2xx, recorded once.
    expect((await post(receiver, first)).body).toEqual({ recorded: false, repeat: true });
    expect((await journal.entries()).filter((e) => e.deliveryId === first.deliveryId)).toHaveLength(1);
    expect((await journal.entries()).map((e) => e.referenceId)).toEqual(['RCV-1']);
  });

  it('accepts deliveries during a secret rotation: by the new secret, and by the previous one until it is retired', async () => {
    const rotated = await ok(it$.admin.POST('/admin/v1/companies/{companyId}/callback/rotate-secret', it$.company));
    // The receiver deployed again with both secrets, as the rotation asks.
    receiver = callbackReceiver({ secret: rotated.secret, previousSecret: firstSecret, journal });

    await book('RCV-2');
    const second = await recorded('RCV-2');
    expect(['current', 'previous']).toContain(second.signedWith);
    // As for RCV-1: the attempt is recorded after the receiver has it.
    const [delivery] = await waitFor(
      async () => {
        const listed = await deliveries('RCV-2');
        return listed[0]?.attempts.length ? listed : undefined;
      },
      { timeoutMs: 20_000, what: 'the attempt of the delivery of RCV-2 recorded' },
    );
    expect(delivery).toMatchObject({ lastStatusCode: 200 });

    // A delivery the service signed with the previous secret (before it learned of the rotation),
    // reaching a receiver that has not recorded it yet: accepted by the previous secret.
    const other = callbackReceiver({ secret: rotated.secret, previousSecret: firstSecret, journal: await Journal.open(path.join(dir, 'other.jsonl')) });
    expect((await post(other, first)).body).toEqual({ recorded: true, repeat: false });
    const retired = callbackReceiver({ secret: rotated.secret, journal: await Journal.open(path.join(dir, 'retired.jsonl')) });
    expect((await post(retired, first)).status).toBe(401);
    // Once the service has the rotation, a delivery carries a signature per valid secret: a receiver
    // holding only either one verifies it. The dispatcher has it by identity.events, a moment after
    // the rotation's answer: a test event names the endpoint version it signs with.
    const { version } = await ok(it$.admin.GET('/admin/v1/companies/{companyId}/callback', it$.company));
    await waitFor(async () => (await ok(it$.admin.POST('/admin/v1/companies/{companyId}/callback/test', it$.company))).data.version === version, {
      timeoutMs: 20_000,
      intervalMs: 250,
      what: 'the dispatcher signing with the rotated endpoint',
    });
    await book('RCV-3');
    const third = await recorded('RCV-3');
    expect(third.headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const [name, secret] of [
      ['new', rotated.secret],
      ['old', firstSecret],
    ] as const) {
      const alone = callbackReceiver({ secret, journal: await Journal.open(path.join(dir, `${name}-only.jsonl`)) });
      expect((await post(alone, third)).body).toEqual({ recorded: true, repeat: false });
    }
  });
});
