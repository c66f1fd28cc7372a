import { parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import type { AccessEventMessage, CredentialRecord } from '@smartlock/contracts';
import { EXCHANGES } from '@smartlock/messaging';
import { Harness, TEST_MESSAGE_KEY, startHarness, until } from '../test-support/harness';
import { accessEvent, cabinetEkey, credential, ref } from '../test-support/factories';

/**
 * Issue 52: a booking's credentials on locks of two vendors. The lock id names the vendor (ADR 0109:
 * TTLock's bare, Nuki's `nuki:<smartlockId>`; here both vendors number their lock 17012345).
 */
const ttlockEkey = () => credential('EKEY', { lockId: '17012345' });
const ttlockPasscode = () => credential('PASSCODE', { lockId: '17012345' });
/** A Nuki keypad code on the bed's cabinet, as the worker reports it (the Nuki adapter has no MAC: ''). */
const nukiCode = (over: Partial<CredentialRecord> = {}) =>
  credential('PASSCODE', {
    lockId: 'nuki:17012345',
    lockMac: '',
    lockLocationType: 'cabinet',
    roomNumber: null,
    roomName: '12',
    roomId: 'room-12',
    bedNumber: '3',
    bedId: 'bed-3',
    passcode: '345678',
    passcodeId: 9001,
    ...over,
  });

const SITE = { name: 'Harbour House', _id: 'site-1' };
const ROOM_101 = { name: '101', _id: 'room-101' };
const ROOM_12 = { name: '12', _id: 'room-12' };
const BED_3 = { name: '3', _id: 'bed-3' };
const FROM = '2026-12-01T14:00:00.000Z';
const TO = '2026-12-04T10:00:00.000Z';

describe('access-api: each credential with its lock provider in v4 and v3, v2 null where a field has no meaning (real broker and database)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('access_provider');
  });
  afterAll(async () => {
    await h?.stop();
  });

  async function publish(msg: AccessEventMessage) {
    await h.publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)), {
      correlationId: msg.correlation_id,
    });
    return msg;
  }
  const v4 = (reference: string) => h.get(`/api/v4/bookings/${reference}/access`, h.a);
  const v3 = (reference: string) => h.get(`/api/v3/booking/getLockData/${reference}`, h.a);
  const v2 = (reference: string) => h.get(`/api/v2/booking/access?ref_id=${reference}`, h.a);
  /** The answer's bytes, as a client receives them. */
  const raw = async (path: string) => String((await h.get(path, h.a, { responseType: 'text', transformResponse: (d: unknown) => d })).data);

  it("a TTLock door and a Nuki cabinet: v4 and v3 name each credential's provider; v2 gives the Nuki code with lockData, lockMac and keyId null; a revoke names the provider", async () => {
    const reference = ref();
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { credentials: [ttlockEkey(), ttlockPasscode(), nukiCode()] }));
    const read = await until(
      async () => {
        const r = await v4(reference);
        return r.data.data?.status === 'active' ? r.data.data : undefined;
      },
      { what: 'active booking' },
    );
    expect(read.credentials).toEqual([
      {
        type: 'EKEY',
        lock: { lockId: '17012345', lockMac: 'AA:BB:CC:DD:EE:01', lockLocationType: 'door', lockProvider: 'ttlock' },
        place: { site: SITE, room: ROOM_101, bed: null },
        valid_from: FROM,
        valid_to: TO,
        keyId: 7001,
        lockData: 'LOCKDATA-DOOR-101',
      },
      expect.objectContaining({ type: 'PASSCODE', lock: expect.objectContaining({ lockId: '17012345', lockProvider: 'ttlock' }), passcode: '482913' }),
      {
        type: 'PASSCODE',
        lock: { lockId: 'nuki:17012345', lockMac: null, lockLocationType: 'cabinet', lockProvider: 'nuki' },
        place: { site: SITE, room: ROOM_12, bed: BED_3 },
        valid_from: FROM,
        valid_to: TO,
        passcode: '345678',
        passcodeId: 9001,
      },
    ]);

    // v3: TTLock's e-key as before; the Nuki code is named, its lock's vendor says why it has no e-key.
    const lockData = (await v3(reference)).data.data;
    expect(lockData.locks).toEqual([
      {
        lockId: '17012345',
        lockMac: 'AA:BB:CC:DD:EE:01',
        lockLocationType: 'door',
        lockData: 'LOCKDATA-DOOR-101',
        keyId: 7001,
        site: SITE,
        room: ROOM_101,
        bed: null,
        validFrom: FROM,
        validTo: TO,
        lockProvider: 'ttlock',
      },
      {
        lockId: 'nuki:17012345',
        lockMac: null,
        lockLocationType: 'cabinet',
        lockData: null,
        keyId: null,
        site: SITE,
        room: ROOM_12,
        bed: BED_3,
        validFrom: FROM,
        validTo: TO,
        lockProvider: 'nuki',
      },
    ]);

    // v2: SPEC's record in its order, then lockProvider; what the Nuki code cannot have is null, never made up.
    const legacy = await v2(reference);
    expect(legacy.status).toBe(200);
    expect(legacy.data.data).toEqual([
      {
        lockData: 'LOCKDATA-DOOR-101',
        lockMac: 'AA:BB:CC:DD:EE:01',
        lockId: '17012345',
        lockLocationType: 'door',
        roomNumber: '101',
        bedNumber: null,
        siteName: 'Harbour House',
        keyId: 7001,
        lockProvider: 'ttlock',
      },
      {
        lockData: null,
        lockMac: null,
        lockId: 'nuki:17012345',
        lockLocationType: 'cabinet',
        roomNumber: null,
        bedNumber: '3',
        siteName: 'Harbour House',
        keyId: null,
        lockProvider: 'nuki',
      },
    ]);
    for (const record of legacy.data.data)
      expect(Object.keys(record)).toEqual([
        'lockData',
        'lockMac',
        'lockId',
        'lockLocationType',
        'roomNumber',
        'bedNumber',
        'siteName',
        'keyId',
        'lockProvider',
      ]);

    // The cabinet's code revoked: v4 lists it revoked with its provider (no code); v3 and v2 no longer show it.
    await publish(
      accessEvent(h.a.id, reference, 'access.revoked', { sequence: 2, credentials: [nukiCode()], occurred_at: new Date(Date.now() + 1000).toISOString() }),
    );
    const after = await until(
      async () => {
        const r = (await v4(reference)).data.data;
        return r?.revoked?.length === 1 ? r : undefined;
      },
      { what: 'the Nuki code revoked' },
    );
    expect(after.credentials.map((c: { lock: { lockProvider: string } }) => c.lock.lockProvider)).toEqual(['ttlock', 'ttlock']);
    expect(after.revoked).toEqual([
      {
        type: 'PASSCODE',
        lock: { lockId: 'nuki:17012345', lockMac: null, lockLocationType: 'cabinet', lockProvider: 'nuki' },
        place: { site: SITE, room: ROOM_12, bed: BED_3 },
        passcodeId: 9001,
        revoked_at: expect.any(String),
      },
    ]);
    expect((await v3(reference)).data.data.locks.map((l: { lockProvider: string }) => l.lockProvider)).toEqual(['ttlock']);
    expect((await v2(reference)).data.data.map((l: { lockProvider: string }) => l.lockProvider)).toEqual(['ttlock']);
  });

  it('a TTLock-only booking: the v4, v3 and v2 answers are byte for byte what they were, with `lockProvider` added last to each lock', async () => {
    const reference = ref();
    const occurredAt = '2026-11-30T09:00:00.000Z';
    const creds = [credential('EKEY'), cabinetEkey(), credential('PASSCODE'), credential('CARD'), credential('REMOTE')];
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { credentials: creds, occurred_at: occurredAt }));
    await until(async () => ((await v4(reference)).data.data?.status === 'active' ? true : undefined), { what: 'active booking' });

    const doorLock = { lockId: 'lock-101', lockMac: 'AA:BB:CC:DD:EE:01', lockLocationType: 'door' };
    const cabinetLock = { lockId: 'lock-cab-3', lockMac: 'AA:BB:CC:DD:EE:03', lockLocationType: 'cabinet' };
    const door = { site: SITE, room: ROOM_101, bed: null };
    const cabinet = { site: SITE, room: ROOM_12, bed: BED_3 };
    const validity = { check_in: FROM, check_out: TO, time_zone: 'UTC' };
    // The answers as the code before issue 52 wrote them, field by field in its order.
    const before = {
      v4: {
        message: 'Booking access retrieved',
        code: 7020,
        error: false,
        data: {
          reference_id: reference,
          status: 'active',
          reason: null,
          validity,
          updated_at: occurredAt,
          credentials: [
            { type: 'EKEY', lock: doorLock, place: door, valid_from: FROM, valid_to: TO, keyId: 7001, lockData: 'LOCKDATA-DOOR-101' },
            { type: 'EKEY', lock: cabinetLock, place: cabinet, valid_from: FROM, valid_to: TO, keyId: 7003, lockData: 'LOCKDATA-CABINET-3' },
            { type: 'PASSCODE', lock: doorLock, place: door, valid_from: FROM, valid_to: TO, passcode: '482913', passcodeId: 55 },
            { type: 'CARD', lock: doorLock, place: door, valid_from: FROM, valid_to: TO, card_id: 'CARD-0042', cardId: 99 },
            { type: 'REMOTE', lock: doorLock, place: door, valid_from: FROM, valid_to: TO, keyId: 7001, lockData: 'LOCKDATA-DOOR-101', remoteUnlock: true },
          ],
          revoked: [],
        },
      },
      v3: {
        message: 'Lock data retrieved',
        code: 7021,
        error: false,
        data: {
          reference_id: reference,
          status: 'active',
          validity,
          locks: [
            { ...doorLock, lockData: 'LOCKDATA-DOOR-101', keyId: 7001, site: SITE, room: ROOM_101, bed: null, validFrom: FROM, validTo: TO },
            { ...cabinetLock, lockData: 'LOCKDATA-CABINET-3', keyId: 7003, site: SITE, room: ROOM_12, bed: BED_3, validFrom: FROM, validTo: TO },
          ],
        },
      },
      v2: {
        message: 'Credentials fetched',
        code: 7005,
        error: false,
        data: [
          {
            lockData: 'LOCKDATA-DOOR-101',
            lockMac: 'AA:BB:CC:DD:EE:01',
            lockId: 'lock-101',
            lockLocationType: 'door',
            roomNumber: '101',
            bedNumber: null,
            siteName: 'Harbour House',
            keyId: 7001,
          },
          {
            lockData: 'LOCKDATA-CABINET-3',
            lockMac: 'AA:BB:CC:DD:EE:03',
            lockId: 'lock-cab-3',
            lockLocationType: 'cabinet',
            roomNumber: null,
            bedNumber: '3',
            siteName: 'Harbour House',
            keyId: 7003,
          },
        ],
      },
    };
    const now = {
      v4: await raw(`/api/v4/bookings/${reference}/access`),
      v3: await raw(`/api/v3/booking/getLockData/${reference}`),
      v2: await raw(`/api/v2/booking/access?ref_id=${reference}`),
    };
    for (const [version, locks] of [
      ['v4', 5],
      ['v3', 2],
      ['v2', 2],
    ] as const) {
      expect({ version, added: now[version].match(/,"lockProvider":"ttlock"}/g)?.length }).toEqual({ version, added: locks });
      expect(now[version].replace(/,"lockProvider":"ttlock"}/g, '}')).toBe(JSON.stringify(before[version]));
    }
  });
});
