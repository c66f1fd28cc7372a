import axios from 'axios';
import { parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import type { AccessEventMessage, LockCloudOperation } from '@smartlock/contracts';
import { EXCHANGES } from '@smartlock/messaging';
import { Harness, TEST_MESSAGE_KEY, startHarness, until } from '../test-support/harness';
import { accessEvent, credential, ref } from '../test-support/factories';

/**
 * The administration portal's read of a booking's access (the edge sends
 * /portal/api/bookings/:ref/access here): what v4 says and what happened, in order; the secrets only
 * for a session with `credentials`.
 */
describe("access-api: a booking's access in the portal", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('access_portal');
  });
  afterAll(async () => {
    await h?.stop();
  });

  const publish = (msg: AccessEventMessage) =>
    h.publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)), { correlationId: msg.correlation_id });
  const read = (reference: string, headers: Record<string, string>) =>
    axios.get(`${h.app.url}/portal/api/bookings/${encodeURIComponent(reference)}/access`, { headers, validateStatus: () => true });

  it('lists what was issued and revoked, in order; a view-only session sees every secret masked, one with `credentials` sees them', async () => {
    const reference = ref('PORTAL');
    const issued = [credential('EKEY'), credential('PASSCODE', { lockId: 'lock-101' }), credential('CARD', { lockId: 'lock-101' })];
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { credentials: issued }));
    const revokedAt = new Date(Date.now() + 1000).toISOString();
    await publish(accessEvent(h.a.id, reference, 'access.revoked', { sequence: 2, credentials: [issued[1]], occurred_at: revokedAt }));

    const viewer = await h.portalSession(h.a, ['view']);
    const masked = await until(
      async () => {
        const r = await read(reference, viewer);
        return r.data.data?.revoked?.length === 1 ? r : undefined;
      },
      { what: 'the revocation applied' },
    );
    expect(masked.status).toBe(200);
    const data = masked.data.data;
    expect(data).toMatchObject({ reference_id: reference, status: 'active', masked: true });
    expect(data.credentials).toEqual([
      expect.objectContaining({ type: 'EKEY', keyId: 7001, lockData: null }),
      expect.objectContaining({ type: 'CARD', card_id: null, cardId: 99 }),
    ]);
    expect(data.revoked).toEqual([expect.objectContaining({ type: 'PASSCODE', revoked_at: revokedAt })]);
    expect(data.history.map((e: { kind: string; sequence: number }) => [e.kind, e.sequence])).toEqual([
      ['access.provisioned', 1],
      ['access.revoked', 2],
    ]);
    expect(data.history[0].credentials).toEqual([
      expect.objectContaining({ type: 'EKEY', lockData: null, lock: expect.objectContaining({ lockId: 'lock-101' }) }),
      expect.objectContaining({ type: 'PASSCODE', passcode: null, passcodeId: 55 }),
      expect.objectContaining({ type: 'CARD', card_id: null }),
    ]);
    expect(JSON.stringify(masked.data)).not.toMatch(/LOCKDATA|482913|CARD-0042/);

    const trusted = await read(reference, await h.portalSession(h.a, ['view', 'credentials']));
    expect(trusted.data.data.masked).toBe(false);
    expect(trusted.data.data.credentials[0]).toMatchObject({ lockData: 'LOCKDATA-DOOR-101' });
    expect(trusted.data.data.history[0].credentials[1]).toMatchObject({ passcode: '482913' });
  });

  it("lists a booking's lock-cloud operations once each, oldest first, with their outcome; another company's session gets a 404", async () => {
    const reference = ref('OPS');
    const op = (id: string, at: string, over: Partial<LockCloudOperation> = {}): LockCloudOperation => ({
      id,
      at,
      action: 'add',
      type: 'EKEY',
      lockId: 'lock-101',
      outcome: 'ok',
      errcode: null,
      message: null,
      latency_ms: 120,
      ...over,
    });
    const failedAdd = op('op-1', '2026-11-25T10:00:00.000Z', {
      type: 'PASSCODE',
      outcome: 'error',
      errcode: -3008,
      message: 'lock cloud /v3/keyboardPwd/add: errcode -3008: gateway offline',
      latency_ms: 340,
    });
    const add = op('op-2', '2026-11-25T10:00:05.000Z');
    const del = op('op-3', '2026-11-25T11:00:00.000Z', { action: 'delete' });
    // Each access event repeats the booking's earlier operations: the answer keeps each once.
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { credentials: [credential('EKEY')], operations: [failedAdd, add] }));
    await publish(accessEvent(h.a.id, reference, 'access.revoked', { sequence: 2, credentials: [credential('EKEY')], operations: [failedAdd, add, del] }));

    const readOps = (headers: Record<string, string>) =>
      axios.get(`${h.app.url}/portal/api/bookings/${encodeURIComponent(reference)}/lock-operations`, { headers, validateStatus: () => true });
    const mine = await h.portalSession(h.a, ['view']);
    const answer = await until(
      async () => {
        const r = await readOps(mine);
        return r.data.data?.operations?.length === 3 ? r : undefined;
      },
      { what: 'both access events recorded' },
    );
    expect(answer.status).toBe(200);
    expect(answer.data).toMatchObject({ code: 7023, data: { reference_id: reference } });
    expect(answer.data.data.operations).toEqual([
      {
        id: 'op-1',
        at: failedAdd.at,
        action: 'add',
        type: 'PASSCODE',
        lock_id: 'lock-101',
        outcome: 'error',
        errcode: -3008,
        message: failedAdd.message,
        latency_ms: 340,
      },
      { id: 'op-2', at: add.at, action: 'add', type: 'EKEY', lock_id: 'lock-101', outcome: 'ok', errcode: null, message: null, latency_ms: 120 },
      { id: 'op-3', at: del.at, action: 'delete', type: 'EKEY', lock_id: 'lock-101', outcome: 'ok', errcode: null, message: null, latency_ms: 120 },
    ]);
    expect(JSON.stringify(answer.data)).not.toMatch(/LOCKDATA|482913|CARD-0042/);

    expect(await readOps(await h.portalSession(h.b, ['view', 'credentials']))).toMatchObject({
      status: 404,
      data: { message: `Booking ${reference} not found` },
    });
    expect((await readOps({})).status).toBe(401);
  });

  it("another company's booking is not found, as an unknown one; no session is a 401", async () => {
    const reference = ref('PORTAL');
    await publish(accessEvent(h.a.id, reference, 'access.failed', { credentials: [], reason: 'Lock offline' }));
    const mine = await h.portalSession(h.a, ['view']);
    const failed = await until(
      async () => {
        const r = await read(reference, mine);
        return r.status === 200 ? r : undefined;
      },
      { what: 'the failure applied' },
    );
    expect(failed.data.data).toMatchObject({
      status: 'failed',
      reason: 'Lock offline',
      history: [expect.objectContaining({ kind: 'access.failed', reason: 'Lock offline' })],
    });
    expect(await read(reference, await h.portalSession(h.b, ['view', 'credentials']))).toMatchObject({
      status: 404,
      data: { message: `Booking ${reference} not found` },
    });
    expect((await read(reference, {})).status).toBe(401);
  });
});
