import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import type { AccessEventMessage, CredentialRecord } from '@smartlock/contracts';
import { Broker, EXCHANGES, createBroker } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import { SmsApi, SmtpSink, startSmsApi, startSmtpSink } from '@smartlock/sinks';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor, NO_RATE_LIMITS } from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';
import { dispatcherModels } from '../models';
import { ReceivedCallback, Receiver, startReceiver } from '../test-support/receivers';
import { TEST_IDENTITY_EVENTS_KEY, TEST_MESSAGE_KEY, TEST_SECRETS_KEY, accessEvent, credential, endpointEvent } from '../test-support/factories';

/** A TTLock e-key on the room's door and a Nuki keypad code on the bed's cabinet, as the worker reports them (the Nuki adapter has no MAC: ''). */
const ttlockDoor = () => credential('EKEY', { lockId: '17012345', lockMac: 'AA:BB:CC:DD:EE:01', keyId: 7001, lockData: 'LOCKDATA-DOOR-101' });
const nukiCabinet = (over: Partial<CredentialRecord> = {}) =>
  credential('PASSCODE', {
    lockId: 'nuki:17012345',
    lockMac: '',
    lockLocationType: 'cabinet',
    roomNumber: null,
    roomName: '101',
    bedNumber: 'B',
    bedId: 'bed-b',
    passcode: '345678',
    passcodeId: 9001,
    ...over,
  });

describe('callback-dispatcher: each credential with its lock provider, in the callback and the guest messages (real broker, database, receiver, SMTP and SMS)', () => {
  let vhost: TestVhost;
  let publisher: Broker;
  let app: RunningService;
  let receiver: Receiver;
  let smtp: SmtpSink;
  let sms: SmsApi;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const dbName = uniqueDbName('dispatcher_provider');
  const { logger } = captureLogger('callback-dispatcher');

  beforeAll(async () => {
    vhost = await createVhost('dispatcher-provider');
    receiver = await startReceiver();
    smtp = await startSmtpSink();
    sms = await startSmsApi();
    app = await start(
      readConfig({
        ...NO_RATE_LIMITS,
        NODE_ENV: 'test',
        PORT: '0',
        AMQP_URL: vhost.url,
        MONGO_URL,
        MONGO_DB: dbName,
        SECRETS_KEY: TEST_SECRETS_KEY,
        IDENTITY_EVENTS_KEY: TEST_IDENTITY_EVENTS_KEY,
        MESSAGE_KEY: TEST_MESSAGE_KEY,
        CALLBACK_RETRY_DELAYS_MS: '100,200',
        CALLBACK_TIMEOUT_MS: '2000',
        SHUTDOWN_TIMEOUT_MS: '3000',
        CALLBACK_ALLOW_LOOPBACK: 'true',
        SMTP_HOST: '127.0.0.1',
        SMTP_PORT: String(smtp.port),
        SMTP_ALLOW_PLAINTEXT: 'true',
        SMTP_FROM: 'Harbour Access <access@harbour.test>',
        SMS_API_URL: sms.url,
        SMS_ACCOUNT_SID: 'AC0123456789',
        SMS_AUTH_TOKEN: 'sms-auth-token',
        SMS_FROM: '+15550001111',
        GUEST_KEY_LINK_BASE: 'https://keys.harbour.test/k',
      }),
      logger,
    );
    publisher = createBroker({ url: vhost.url, logger, connectionName: 'test-publisher' });
    await publisher.declareExchanges([EXCHANGES.accessEvents, EXCHANGES.identityEvents]);
    await publisher.connect();
  });
  afterAll(async () => {
    await publisher?.close(0);
    await app?.stop();
    await Promise.all([receiver?.close(), smtp?.close(), sms?.close()]);
    await vhost?.remove();
    await dropDatabases(dbName);
  });

  /** A new company whose callback endpoint is the receiver (hmac with `secret`). */
  async function company(): Promise<string> {
    const companyId = `co-${randomUUID().slice(0, 8)}`;
    await publisher.publish(
      EXCHANGES.identityEvents.name,
      '',
      endpointEvent(companyId, receiver.url, { type: 'hmac', secrets: [secret] }, parseSecretsKey(TEST_SECRETS_KEY)),
      {
        signWith: parseSecretsKey(TEST_IDENTITY_EVENTS_KEY),
      },
    );
    await waitFor(async () => (await dispatcherModels(app.ctx.db).Endpoint.findOne({ company_id: companyId }).lean()) !== null, {
      what: 'the endpoint in the replica',
    });
    return companyId;
  }
  async function publish(msg: AccessEventMessage) {
    await publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)), {
      correlationId: msg.correlation_id,
    });
    return msg;
  }
  const callbackOf = (msg: AccessEventMessage) =>
    waitFor(() => receiver.received.find((cb) => cb.body.eventId === msg.event_id) ?? false, {
      what: `the callback of ${msg.type} ${msg.reference_id}`,
    }) as Promise<ReceivedCallback>;
  const mailTo = (address: string) =>
    waitFor(() => smtp.mails.find((m) => m.to.includes(address)) ?? false, { what: `mail to ${address}` }) as Promise<SmtpSink['mails'][number]>;
  const smsTo = (phone: string) =>
    waitFor(() => sms.messages.find((m) => m.to === phone) ?? false, { what: `SMS to ${phone}` }) as Promise<SmsApi['messages'][number]>;
  const guest = () => {
    const id = randomUUID().slice(0, 8);
    return { name: 'Ada Lovelace', email: `ada.${id}@guest.test`, phone: `+44700${Math.floor(Math.random() * 1e6)}` };
  };

  it("a booking with a TTLock door and a Nuki cabinet: the signed callback names each credential's provider, the Nuki lock has no MAC (null), the revoke names it too", async () => {
    const companyId = await company();
    const msg = await publish(accessEvent(companyId, 'access.provisioned', { credentials: [ttlockDoor(), nukiCabinet()] }));
    const cb = await callbackOf(msg);
    // What a receiver does: verify the bytes with the standardwebhooks library, then read them.
    const body = new Webhook(secret).verify(cb.raw.toString('utf8'), cb.headers as Record<string, string>) as {
      data: { credentials: Record<string, unknown>[] };
    };
    expect(body.data.credentials).toEqual([
      expect.objectContaining({
        type: 'EKEY',
        lockId: '17012345',
        lockMac: 'AA:BB:CC:DD:EE:01',
        keyId: 7001,
        lockData: 'LOCKDATA-DOOR-101',
        lockProvider: 'ttlock',
      }),
      {
        type: 'PASSCODE',
        lockId: 'nuki:17012345',
        lockMac: null,
        lockLocationType: 'cabinet',
        siteId: 'site-1',
        siteName: 'Harbour House',
        roomId: 'room-101',
        roomNumber: null,
        roomName: '101',
        bedId: 'bed-b',
        bedNumber: 'B',
        validFrom: '2026-12-01T14:00:00.000Z',
        validTo: '2026-12-04T10:00:00.000Z',
        passcode: '345678',
        passcodeId: 9001,
        lockProvider: 'nuki',
      },
    ]);

    const revoked = await publish(accessEvent(companyId, 'access.revoked', { reference_id: msg.reference_id, sequence: 2, credentials: [nukiCabinet()] }));
    const gone = (await callbackOf(revoked)).body as { data: { credentials: Record<string, unknown>[] } };
    expect(gone.data.credentials).toEqual([expect.objectContaining({ lockId: 'nuki:17012345', lockMac: null, passcodeId: 9001, lockProvider: 'nuki' })]);
    expect(gone.data.credentials[0]).not.toHaveProperty('passcode');
  });

  it("a TTLock-only booking's callback is byte for byte what it was, with `lockProvider` added last to each credential", async () => {
    const companyId = await company();
    const door = credential('PASSCODE');
    const cabinet = credential('CARD', {
      lockId: 'lock-cab-3',
      lockMac: 'AA:BB:CC:DD:EE:03',
      lockLocationType: 'cabinet',
      roomNumber: null,
      roomName: '12',
      roomId: 'room-12',
      bedNumber: '3',
      bedId: 'bed-3',
    });
    const msg = await publish(accessEvent(companyId, 'access.provisioned', { credentials: [door, cabinet] }));
    const cb = await callbackOf(msg);
    const before = JSON.stringify({
      event: 'access.provisioned',
      referenceId: msg.reference_id,
      eventId: msg.event_id,
      deliveryId: cb.headers['webhook-id'],
      occurredAt: msg.occurred_at,
      data: {
        credentials: [
          {
            type: 'PASSCODE',
            lockId: 'lock-101',
            lockMac: 'AA:BB:CC:DD:EE:01',
            lockLocationType: 'door',
            siteId: 'site-1',
            siteName: 'Harbour House',
            roomId: 'room-101',
            roomNumber: '101',
            roomName: '101',
            bedId: null,
            bedNumber: null,
            validFrom: '2026-12-01T14:00:00.000Z',
            validTo: '2026-12-04T10:00:00.000Z',
            passcode: '482913',
            passcodeId: 55,
          },
          {
            type: 'CARD',
            lockId: 'lock-cab-3',
            lockMac: 'AA:BB:CC:DD:EE:03',
            lockLocationType: 'cabinet',
            siteId: 'site-1',
            siteName: 'Harbour House',
            roomId: 'room-12',
            roomNumber: null,
            roomName: '12',
            bedId: 'bed-3',
            bedNumber: '3',
            validFrom: '2026-12-01T14:00:00.000Z',
            validTo: '2026-12-04T10:00:00.000Z',
            cardNumber: 'CARD-0042',
            cardId: 99,
          },
        ],
        validity: { checkIn: '2026-12-01T14:00:00.000Z', checkOut: '2026-12-04T10:00:00.000Z' },
      },
    });
    const raw = cb.raw.toString('utf8');
    expect(raw.match(/,"lockProvider":"ttlock"}/g)).toHaveLength(2);
    expect(raw.replace(/,"lockProvider":"ttlock"}/g, '}')).toBe(before);
  });

  it('the guest is told the Nuki code is a keypad code for that lock, beside the TTLock key as before (e-mail and SMS)', async () => {
    const g = guest();
    const msg = await publish(accessEvent(`co-${randomUUID().slice(0, 8)}`, 'access.provisioned', { guest: g, credentials: [ttlockDoor(), nukiCabinet()] }));
    const link = `https://keys.harbour.test/k/${msg.reference_id}`;
    const mail = await mailTo(g.email);
    // SMTP lines end in CRLF
    expect(mail.textBody?.replace(/\r\n/g, '\n')).toBe(
      [
        'Hello Ada Lovelace,',
        '',
        `Your access for booking ${msg.reference_id} is ready.`,
        'When: 1 Dec 2026, 14:00 UTC to 4 Dec 2026, 10:00 UTC (site time zone unknown)',
        '',
        'Where: Harbour House, room 101',
        `How: mobile key: ${link}`,
        'Where: Harbour House, room 101, bed B, cabinet',
        'How: keypad code 345678 for the Nuki lock (enter it on its keypad)',
        '',
      ].join('\n'),
    );
    expect(mail.text).toContain('<b>How:</b> keypad code 345678 for the Nuki lock (enter it on its keypad)');
    expect((await smsTo(g.phone)).body).toBe(
      `Booking ${msg.reference_id}: 1 Dec 2026, 14:00 UTC to 4 Dec 2026, 10:00 UTC (site time zone unknown). Harbour House, room 101: mobile key: ${link} Harbour House, room 101, bed B, cabinet: keypad code 345678 for the Nuki lock (enter it on its keypad)`,
    );
  });

  it("a TTLock passcode's SMS is what it was: a door code, no brand named", async () => {
    const g = guest();
    const msg = await publish(accessEvent(`co-${randomUUID().slice(0, 8)}`, 'access.provisioned', { guest: g, credentials: [credential('PASSCODE')] }));
    expect((await smsTo(g.phone)).body).toBe(
      `Booking ${msg.reference_id}: 1 Dec 2026, 14:00 UTC to 4 Dec 2026, 10:00 UTC (site time zone unknown). Harbour House, room 101: door code 482913`,
    );
  });
});
