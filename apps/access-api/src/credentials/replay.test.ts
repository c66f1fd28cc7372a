import axios from 'axios';
import amqp, { Channel, ChannelModel } from 'amqplib';
import { AccessEventMessage, accessEventMessageSchema } from '@smartlock/contracts';
import { openAccessEvent, parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import { EXCHANGES, QUEUES } from '@smartlock/messaging';
import { waitFor } from '@smartlock/testing';
import { Harness, TEST_MESSAGE_KEY, startHarness } from '../test-support/harness';
import { accessEvent, cabinetEkey, credential, ref } from '../test-support/factories';

/** location-api's occupancy re-sync: access-api sends a company's booking credential messages again, to location-api's queue only. */
describe('POST /admin/v1/companies/:companyId/access-events/replay', () => {
  let h: Harness;
  let conn: ChannelModel;
  let ch: Channel;
  const queue = QUEUES.locationApiAccessEvents.name;

  beforeAll(async () => {
    h = await startHarness('access_replay');
    conn = await amqp.connect(h.vhost.url);
    ch = await conn.createChannel();
    // As location-api declares it: originals arrive there too.
    await ch.assertQueue(queue, { durable: true });
    for (const key of QUEUES.locationApiAccessEvents.bindings) await ch.bindQueue(queue, EXCHANGES.accessEvents.name, key);
  });
  afterAll(async () => {
    await conn?.close();
    await h?.stop();
  });

  const key = parseSecretsKey(TEST_MESSAGE_KEY);
  /** The queue's messages, opened as a holder of MESSAGE_KEY would; `bytes` as they were on the broker. */
  const bytes: string[] = [];
  async function drain(): Promise<AccessEventMessage[]> {
    const out: AccessEventMessage[] = [];
    for (let m = await ch.get(queue, { noAck: true }); m; m = await ch.get(queue, { noAck: true })) {
      bytes.push(m.content.toString());
      out.push(openAccessEvent(JSON.parse(m.content.toString()), key));
    }
    return out;
  }
  const replay = (companyId: string, token = 'test-admin-token-123') =>
    axios.post(`${h.app.url}/admin/v1/companies/${companyId}/access-events/replay`, undefined, {
      headers: { Authorization: `Bearer ${token}` },
      validateStatus: () => true,
    });
  const publish = (m: AccessEventMessage) =>
    h.publisher.publish(EXCHANGES.accessEvents.name, m.type, sealAccessEvent(m, key), { correlationId: m.correlation_id });

  it("sends the company's provisions and revocations of bookings again, in the contract's shape; not failures, employees or another company's", async () => {
    const [r1, r2] = [ref(), ref()];
    const provisioned = accessEvent(h.a.id, r1, 'access.provisioned', { credentials: [credential('PASSCODE'), cabinetEkey()] });
    const revoked = accessEvent(h.a.id, r1, 'access.revoked', { sequence: 2, credentials: [credential('PASSCODE')] });
    const others = [
      accessEvent(h.a.id, r2, 'access.failed', { reason: 'Room not found' }),
      accessEvent(h.a.id, 'EMP-1', 'access.provisioned', { subject: 'employee', credentials: [credential('PASSCODE')] }),
      accessEvent(h.b.id, r2, 'access.provisioned', { credentials: [credential('EKEY')] }),
    ];
    for (const m of [provisioned, revoked, ...others]) await publish(m);
    // All five stored by access-api before the replay reads its log.
    await waitFor(
      () =>
        h
          .logs()
          .split('\n')
          .filter((l) => l.includes('access event recorded')).length >= 5,
      { what: 'five access events recorded' },
    );
    await drain(); // the originals
    bytes.length = 0;

    const res = await replay(h.a.id);
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ message: 'Access events replayed to location-api', code: 7022, error: false, data: { company_id: h.a.id, replayed: 2 } });
    const sent = (await drain()).sort((x, y) => x.sequence - y.sequence);
    expect(sent.map((m) => [m.type, m.reference_id, m.sequence, m.event_id, m.occurred_at])).toEqual([
      ['access.provisioned', r1, 1, provisioned.event_id, provisioned.occurred_at],
      ['access.revoked', r1, 2, revoked.event_id, revoked.occurred_at],
    ]);
    for (const b of bytes) expect(accessEventMessageSchema.validate(JSON.parse(b)).error).toBeUndefined();
    // the stored credentials leave sealed, like the worker's originals
    for (const secret of ['482913', 'LOCKDATA-CABINET-3']) expect(bytes.join('\n')).not.toContain(secret);
    expect(sent[0].credentials.map((c) => c.passcode ?? c.lockData)).toEqual(['482913', 'LOCKDATA-CABINET-3']);
    expect(sent[0].credentials).toEqual(
      provisioned.credentials.map((c) => expect.objectContaining({ type: c.type, lockId: c.lockId, roomId: c.roomId, bedId: c.bedId, validTo: c.validTo })),
    );
  });

  it('needs the admin token; a malformed company id is a 400 in the envelope', async () => {
    expect((await replay(h.a.id, 'not-the-admin-token')).status).toBe(401);
    const bad = await replay('abc');
    expect(bad.status).toBe(400);
    expect(bad.data).toEqual({ message: 'companyId must be a 24-character hexadecimal ObjectId', code: 4000, error: true, data: null });
  });
});
