import amqp from 'amqplib';
import { randomBytes } from 'node:crypto';
import { parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import type { AccessEventMessage, BookingEventMessage } from '@smartlock/contracts';
import { EXCHANGES, QUEUES, deadLetterQueueName } from '@smartlock/messaging';
import { waitFor } from '@smartlock/testing';
import { Harness, TEST_MESSAGE_KEY, startHarness, until } from '../test-support/harness';
import { accessEvent, bookingEvent, cabinetEkey, credential, ref } from '../test-support/factories';

describe('access-api: credentials slice and retrieval v4, v3, legacy v2 (real broker and database)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('access_cred');
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** As the worker publishes: credentials sealed with MESSAGE_KEY. */
  async function publish(msg: AccessEventMessage, key = parseSecretsKey(TEST_MESSAGE_KEY)) {
    await h.publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, key), { correlationId: msg.correlation_id });
    return msg;
  }
  async function publishBooking(msg: BookingEventMessage) {
    await h.publisher.publish(EXCHANGES.bookingEvents.name, `booking.${msg.event_type.toLowerCase()}`, msg);
  }
  const v4 = (reference: string, c = h.a) => h.get(`/api/v4/bookings/${encodeURIComponent(reference)}/access`, c);
  const v3 = (reference: string, c = h.a) => h.get(`/api/v3/booking/getLockData/${encodeURIComponent(reference)}`, c);
  const v2 = (query: string, c = h.a) => h.get(`/api/v2/booking/access${query}`, c);
  /** Waits until the log says this message was handled (first time or again). */
  const handled = (reference: string, n: number) =>
    waitFor(
      () =>
        h
          .logs()
          .split('\n')
          .filter((l) => l.includes(`"referenceId":"${reference}"`) && l.includes('access event')).length >= n,
      {
        what: `${n} access events of ${reference} handled`,
      },
    );

  const allTypes = () => [
    credential('EKEY'),
    cabinetEkey(),
    credential('PASSCODE', { lockId: 'lock-101' }),
    credential('CARD', { lockId: 'lock-101' }),
    credential('REMOTE', { lockId: 'lock-101', keyId: 7001 }),
  ];

  it("stores every credential's lockData, passcode and card number sealed, bound to its company: a dump holds none, a copy under another company opens nothing", async () => {
    const reference = ref();
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { credentials: allTypes() }));
    const read = await until(
      async () => {
        const r = await v4(reference);
        return r.data.data?.status === 'active' ? r : undefined;
      },
      { what: 'active booking' },
    );
    expect(read.data.data.credentials.map((c: { lockData?: string; passcode?: string; card_id?: string }) => c.lockData ?? c.passcode ?? c.card_id)).toEqual(
      expect.arrayContaining(['LOCKDATA-DOOR-101', '482913', 'CARD-0042']),
    );

    const log = h.app.ctx.db.collection('access_log');
    const stored = await log.findOne({ company_id: h.a.id, reference_id: reference, kind: 'access.provisioned' });
    const dump = JSON.stringify(stored);
    for (const secret of ['LOCKDATA-DOOR-101', '482913', 'CARD-0042']) expect(dump).not.toContain(secret);
    expect(stored?.credentials).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          lockId: 'lock-101',
          keyId: 7001,
          sealed: { iv: expect.any(String), tag: expect.any(String), ciphertext: expect.any(String) },
        }),
      ]),
    );

    // The same bytes filed under company B (a tampered database): B's read opens nothing.
    const copied = { ...stored, _id: `${stored?._id}-copy`, company_id: h.b.id };
    await log.insertOne(copied as never);
    const other = await v4(reference, h.b);
    expect(other.status).toBe(500);
    expect(JSON.stringify(other.data)).not.toMatch(/LOCKDATA|482913|CARD-0042/);
    await log.deleteOne({ _id: copied._id as never });
  });

  it('a booking the worker has not provisioned yet is pending (200, no credentials); then active with every credential type', async () => {
    const reference = ref();
    await publishBooking(bookingEvent(h.a.id, reference));
    const pending = await until(
      async () => {
        const r = await v4(reference);
        return r.status === 200 ? r : undefined;
      },
      { what: 'pending booking' },
    );
    expect(pending.data).toMatchObject({ code: 7020, error: false, data: { reference_id: reference, status: 'pending', credentials: [], revoked: [] } });
    expect(pending.data.data.validity).toEqual({ check_in: '2026-12-01T14:00:00.000Z', check_out: '2026-12-04T10:00:00.000Z', time_zone: null });
    expect((await v2(`?ref_id=${reference}`)).data).toMatchObject({ code: 7005, error: false, data: [] });
    expect((await v3(reference)).data).toMatchObject({ code: 7021, data: { status: 'pending', locks: [] } });

    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { credentials: allTypes(), site_time_zone: 'America/New_York' }));
    const res = await until(
      async () => {
        const r = await v4(reference);
        return r.data.data?.status === 'active' ? r : undefined;
      },
      { what: 'active booking' },
    );
    expect(res.status).toBe(200);
    // The provisioned instants, and the zone of the site they were resolved in (issue 48).
    expect(res.data.data.validity).toEqual({ check_in: '2026-12-01T14:00:00.000Z', check_out: '2026-12-04T10:00:00.000Z', time_zone: 'America/New_York' });
    expect(res.data.message).toEqual(expect.any(String));
    const creds = res.data.data.credentials;
    expect(creds).toHaveLength(5);
    expect(creds[0]).toEqual({
      type: 'EKEY',
      lock: { lockId: 'lock-101', lockMac: 'AA:BB:CC:DD:EE:01', lockLocationType: 'door', lockProvider: 'ttlock' },
      place: { site: { name: 'Harbour House', _id: 'site-1' }, room: { name: '101', _id: 'room-101' }, bed: null },
      valid_from: '2026-12-01T14:00:00.000Z',
      valid_to: '2026-12-04T10:00:00.000Z',
      keyId: 7001,
      lockData: 'LOCKDATA-DOOR-101',
    });
    expect(creds[1]).toMatchObject({
      type: 'EKEY',
      lock: { lockLocationType: 'cabinet' },
      place: { room: { name: '12', _id: 'room-12' }, bed: { name: '3', _id: 'bed-3' } },
      keyId: 7003,
    });
    expect(creds[2]).toMatchObject({ type: 'PASSCODE', passcode: '482913', passcodeId: 55 });
    expect(creds[3]).toMatchObject({ type: 'CARD', card_id: 'CARD-0042', cardId: 99 });
    expect(creds[4]).toMatchObject({ type: 'REMOTE', keyId: 7001, remoteUnlock: true });
    // The access event does not change what a booking event said about the provider.
    expect(res.data.data.reason).toBeNull();
  });

  it("v2: exactly SPEC's credential record, field by field and type by type, for a door and a cabinet lock; 7005; deprecation headers", async () => {
    const reference = ref();
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { credentials: allTypes() }));
    const res = await until(
      async () => {
        const r = await v2(`?ref_id=${reference}`);
        return r.status === 200 && r.data.data.length ? r : undefined;
      },
      { what: 'v2 credentials' },
    );
    expect(res.data.code).toBe(7005);
    expect(res.data.error).toBe(false);
    expect(typeof res.data.message).toBe('string');
    // One per e-key on a lock: the REMOTE record is the door's e-key again; passcodes and cards are not e-keys.
    expect(res.data.data).toHaveLength(2);
    const [door, cabinet] = res.data.data;
    // SPEC's fields, then the documented addition lockProvider (ADR 0109)
    const fields = ['lockData', 'lockMac', 'lockId', 'lockLocationType', 'roomNumber', 'bedNumber', 'siteName', 'keyId', 'lockProvider'];
    for (const record of [door, cabinet]) {
      expect(Object.keys(record).sort()).toEqual([...fields].sort());
      expect(typeof record.lockData).toBe('string');
      expect(typeof record.lockMac).toBe('string');
      expect(typeof record.lockId).toBe('string');
      expect(['door', 'cabinet']).toContain(record.lockLocationType);
      expect(typeof record.siteName).toBe('string');
      expect(typeof record.keyId).toBe('number');
    }
    expect(door).toEqual({
      lockData: 'LOCKDATA-DOOR-101',
      lockMac: 'AA:BB:CC:DD:EE:01',
      lockId: 'lock-101',
      lockLocationType: 'door',
      roomNumber: '101',
      bedNumber: null,
      siteName: 'Harbour House',
      keyId: 7001,
      lockProvider: 'ttlock',
    });
    expect(cabinet).toEqual({
      lockData: 'LOCKDATA-CABINET-3',
      lockMac: 'AA:BB:CC:DD:EE:03',
      lockId: 'lock-cab-3',
      lockLocationType: 'cabinet',
      roomNumber: null,
      bedNumber: '3',
      siteName: 'Harbour House',
      keyId: 7003,
      lockProvider: 'ttlock',
    });
    expect(res.headers.deprecation).toMatch(/^@\d+$/);
    expect(new Date(String(res.headers.sunset)).toISOString()).toBe('2027-06-30T00:00:00.000Z');
    expect(res.headers.link).toBe(`</api/v3/booking/getLockData/${reference}>; rel="successor-version"`);
    expect((await v2(`?ref_id=${reference}&provider=direct`)).data.data).toHaveLength(2);

    const lockData = await v3(reference);
    expect(lockData.data).toMatchObject({ code: 7021, error: false, data: { reference_id: reference, status: 'active' } });
    expect(lockData.data.data.locks).toEqual([
      expect.objectContaining({
        lockId: 'lock-101',
        lockLocationType: 'door',
        keyId: 7001,
        lockData: 'LOCKDATA-DOOR-101',
        room: { name: '101', _id: 'room-101' },
        bed: null,
      }),
      expect.objectContaining({
        lockId: 'lock-cab-3',
        lockLocationType: 'cabinet',
        keyId: 7003,
        bed: { name: '3', _id: 'bed-3' },
        site: { name: 'Harbour House', _id: 'site-1' },
      }),
    ]);
  });

  it("v2: ref_id missing, empty, an array or an operator object is a 400 in the envelope; a bad provider too; another provider's booking is a 404", async () => {
    for (const q of [
      '',
      '?ref_id=',
      '?ref_id=a&ref_id=b',
      '?ref_id[$gt]=',
      '?ref_id[$ne]=x',
      '?ref_id=ok1234&provider[$ne]=x',
      '?ref_id=ok1234&provider=a&provider=b',
      '?ref_id=ok1234&provider=bad%20name',
    ]) {
      const r = await v2(q);
      expect({ q, status: r.status }).toEqual({ q, status: 400 });
      expect(r.data).toEqual({ message: expect.any(String), code: 4000, error: true, data: null });
      expect(r.headers.deprecation).toBeDefined();
    }
    expect((await v2('')).data.message).toBe('ref_id is required');
    const reference = ref();
    await publishBooking(bookingEvent(h.a.id, reference, { provider: 'cloudbeds' }));
    await waitFor(async () => (await v4(reference)).status === 200, { what: 'booking known' });
    expect((await v2(`?ref_id=${reference}`)).status).toBe(404);
    expect((await v2(`?ref_id=${reference}&provider=cloudbeds`)).data).toMatchObject({ code: 7005, data: [] });
  });

  it('cancel: after access.revoked nothing is active, the revoked list says when (and holds no secret)', async () => {
    const reference = ref();
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { credentials: allTypes() }));
    await waitFor(async () => (await v4(reference)).data.data?.status === 'active', { what: 'active' });
    const revokedAt = new Date(Date.now() + 1000).toISOString();
    await publish(accessEvent(h.a.id, reference, 'access.revoked', { sequence: 2, credentials: allTypes(), occurred_at: revokedAt }));
    const res = await until(
      async () => {
        const r = await v4(reference);
        return r.data.data?.status === 'revoked' ? r : undefined;
      },
      { what: 'revoked' },
    );
    expect(res.data.data.credentials).toEqual([]);
    expect(res.data.data.revoked).toHaveLength(5);
    for (const r of res.data.data.revoked) {
      expect(r.revoked_at).toBe(revokedAt);
      expect(r).not.toHaveProperty('lockData');
      expect(r).not.toHaveProperty('passcode');
    }
    expect(JSON.stringify(res.data)).not.toContain('LOCKDATA');
    expect((await v2(`?ref_id=${reference}`)).data.data).toEqual([]);
    expect((await v3(reference)).data.data).toMatchObject({ status: 'revoked', locks: [] });
  });

  it('redelivered and out-of-order messages never resurrect a revoked credential; a newer version does grant again', async () => {
    const reference = ref();
    const provision = accessEvent(h.a.id, reference, 'access.provisioned', { sequence: 1, credentials: [credential('EKEY'), credential('PASSCODE')] });
    const revoke = accessEvent(h.a.id, reference, 'access.revoked', { sequence: 2, credentials: [credential('EKEY'), credential('PASSCODE')] });
    // The revoke overtakes the provision.
    await publish(revoke);
    await handled(reference, 1);
    await publish(provision);
    await handled(reference, 2);
    expect((await v4(reference)).data.data).toMatchObject({ status: 'revoked', credentials: [] });
    // A redelivery of the same provision, and a late re-publication of version 1 with another timestamp.
    await publish(provision);
    await publish({ ...provision, occurred_at: new Date(Date.now() + 5000).toISOString() });
    await handled(reference, 4);
    expect(h.logs()).toContain('access event already recorded');
    expect((await v4(reference)).data.data).toMatchObject({ status: 'revoked', credentials: [] });
    expect((await v2(`?ref_id=${reference}`)).data.data).toEqual([]);

    // A revoke of one credential at the same version as a provision wins over it.
    const reference2 = ref();
    await publish(accessEvent(h.a.id, reference2, 'access.revoked', { sequence: 3, credentials: [credential('PASSCODE')] }));
    await publish(accessEvent(h.a.id, reference2, 'access.provisioned', { sequence: 3, credentials: [credential('EKEY'), credential('PASSCODE')] }));
    await handled(reference2, 2);
    const mixed = (await v4(reference2)).data.data;
    expect(mixed.status).toBe('active');
    expect(mixed.credentials.map((c: { type: string }) => c.type)).toEqual(['EKEY']);

    // Re-booked after the cancel: version 3 grants a new e-key.
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { sequence: 3, credentials: [credential('EKEY', { keyId: 8001 })] }));
    const again = await until(
      async () => {
        const r = await v4(reference);
        return r.data.data?.status === 'active' ? r.data.data : undefined;
      },
      { what: 'active again' },
    );
    expect(again.credentials).toHaveLength(1);
    expect(again.credentials[0].keyId).toBe(8001);
    expect(again.revoked.map((r: { type: string }) => r.type).sort()).toEqual(['EKEY', 'PASSCODE']);
  });

  it('a room move: the newer full set replaces the old one, whose credentials are listed as revoked', async () => {
    const reference = ref();
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { sequence: 1, credentials: [credential('EKEY')] }));
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { sequence: 2, credentials: [cabinetEkey()] }));
    const data = await until(
      async () => {
        const r = await v4(reference);
        return r.data.data?.revoked?.length === 1 ? r.data.data : undefined;
      },
      { what: 'room move applied' },
    );
    expect(data.credentials.map((c: { lock: { lockId: string } }) => c.lock.lockId)).toEqual(['lock-cab-3']);
    expect(data.revoked[0]).toMatchObject({ lock: { lockId: 'lock-101' }, keyId: 7001 });
  });

  it('credentials sealed with another key: dead-lettered at once, nothing served; the dead-letter dump holds no secret', async () => {
    const r = ref();
    const dlq = deadLetterQueueName(QUEUES.accessApiAccessEvents.name);
    const before = (await h.vhost.queue(dlq))?.messages ?? 0;
    await publish(accessEvent(h.a.id, r, 'access.provisioned', { credentials: allTypes() }), randomBytes(32));
    await waitFor(async () => (await h.vhost.queue(dlq))?.messages === before + 1, { what: 'the message in the dead-letter queue' });
    expect(h.logs()).toContain('sealed credentials do not open with MESSAGE_KEY');
    expect((await v3(r)).status).toBe(404);
    const conn = await amqp.connect(h.vhost.url);
    const ch = await conn.createChannel();
    const dump: string[] = [];
    for (let m = await ch.get(dlq, { noAck: true }); m; m = await ch.get(dlq, { noAck: true })) dump.push(m.content.toString());
    await conn.close();
    expect(dump.some((d) => d.includes(r))).toBe(true);
    for (const secret of ['LOCKDATA-DOOR-101', 'LOCKDATA-CABINET-3', '482913', 'CARD-0042']) expect(dump.join('\n')).not.toContain(secret);
  });

  it('access.failed: status failed with the reason', async () => {
    const reference = ref();
    await publish(accessEvent(h.a.id, reference, 'access.failed', { reason: 'Room not found' }));
    const data = await until(async () => (await v4(reference)).data.data, { what: 'failed booking' });
    expect(data).toMatchObject({ status: 'failed', reason: 'Room not found', credentials: [] });
  });

  it("company isolation: another company's reference is the same 404 as an unknown one, on every route", async () => {
    const reference = ref();
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { credentials: [credential('EKEY')] }));
    await waitFor(async () => (await v4(reference)).status === 200, { what: 'provisioned' });
    const unknown = ref();
    for (const [mine, theirs] of [
      [await v4(unknown, h.b), await v4(reference, h.b)],
      [await v3(unknown, h.b), await v3(reference, h.b)],
      [await v2(`?ref_id=${unknown}`, h.b), await v2(`?ref_id=${reference}`, h.b)],
    ]) {
      expect(theirs.status).toBe(404);
      expect(theirs.data).toEqual({ message: expect.any(String), code: 4040, error: true, data: null });
      expect(theirs.data.message).toBe(mine.data.message.replace(unknown, reference));
    }
    expect((await h.get(`/api/v4/bookings/${reference}/access`, { id: '', key: '' })).status).toBe(401);
    const forged = await h.get(`/api/v4/bookings/${reference}/access`, h.b, { headers: { 'X-Company-Id': h.a.id } });
    expect(forged.status).toBe(403);
    expect(JSON.stringify(forged.data)).not.toContain('LOCKDATA');
  });

  it("an employee schedule's report is not a booking, even with the same reference string", async () => {
    const reference = ref('EMP');
    await h.publisher.publish(EXCHANGES.accessEvents.name, 'access.provisioned', {
      ...accessEvent(h.a.id, reference, 'access.provisioned', { credentials: [credential('EKEY')] }),
      subject: 'employee',
    });
    await handled(reference, 1);
    expect((await v4(reference)).status).toBe(404);
  });
});
