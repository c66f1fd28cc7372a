import axios from 'axios';
import { randomUUID } from 'node:crypto';
import { parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import type { AccessEventMessage } from '@smartlock/contracts';
import { Broker, EXCHANGES, QUEUES, createBroker } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor, NO_RATE_LIMITS } from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';
import { dispatcherModels } from '../models';
import { SmsApi, SmtpSink, startSmsApi, startSmtpSink } from '@smartlock/sinks';
import { Receiver, startReceiver } from '../test-support/receivers';
import { TEST_IDENTITY_EVENTS_KEY, TEST_MESSAGE_KEY, TEST_SECRETS_KEY, accessEvent, credential, endpointEvent } from '../test-support/factories';

const key = parseSecretsKey(TEST_SECRETS_KEY);

/** The dispatcher's configuration in these tests: the keys, short retries, SMTP on loopback; `extra` on top. */
function dispatcherConfig(amqpUrl: string, dbName: string, extra: Record<string, string>) {
  return readConfig({
    ...NO_RATE_LIMITS,
    NODE_ENV: 'test',
    PORT: '0',
    AMQP_URL: amqpUrl,
    MONGO_URL,
    MONGO_DB: dbName,
    SECRETS_KEY: TEST_SECRETS_KEY,
    IDENTITY_EVENTS_KEY: TEST_IDENTITY_EVENTS_KEY,
    MESSAGE_KEY: TEST_MESSAGE_KEY,
    CALLBACK_RETRY_DELAYS_MS: '100,200',
    CALLBACK_TIMEOUT_MS: '2000',
    SMTP_HOST: '127.0.0.1',
    ...extra,
  });
}

describe('callback-dispatcher: credentials to the guest by e-mail and SMS (real SMTP server, SMS stub)', () => {
  let vhost: TestVhost;
  let publisher: Broker;
  let app: RunningService;
  let smtp: SmtpSink;
  let sms: SmsApi;
  let callbacks: Receiver;
  const smsFailures = new Map<string, number>();
  const dbName = uniqueDbName('dispatcher_guest');
  const { logger, text } = captureLogger('callback-dispatcher');
  const models = () => dispatcherModels(app.ctx.db);

  beforeAll(async () => {
    vhost = await createVhost('dispatcher-guest');
    smtp = await startSmtpSink({ refuse: (address) => address.startsWith('nobody@') });
    sms = await startSmsApi({
      reply: (to) => {
        if (to === '+000') return 400;
        const left = smsFailures.get(to) ?? 0;
        if (left > 0) {
          smsFailures.set(to, left - 1);
          return 500;
        }
        return 201;
      },
    });
    callbacks = await startReceiver();
    app = await start(
      dispatcherConfig(vhost.url, dbName, {
        // per company and channel: each test's company is new, the pump test's goes over
        RATE_LIMIT_GUEST_MESSAGES_PER_HOUR: '5',
        CALLBACK_ALLOW_LOOPBACK: 'true', // the callback receiver listens on loopback
        SMTP_PORT: String(smtp.port),
        SMTP_ALLOW_PLAINTEXT: 'true', // the sink is a local relay without TLS
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
    await Promise.all([smtp?.close(), sms?.close(), callbacks?.close()]);
    await vhost?.remove();
    await dropDatabases(dbName);
  });

  async function publish(msg: AccessEventMessage) {
    // sealed, as the worker publishes
    await publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)));
    return msg;
  }

  function guest() {
    const id = randomUUID().slice(0, 8);
    return { name: 'Ada Lovelace', email: `ada.${id}@guest.test`, phone: `+44700${Math.floor(Math.random() * 1e6)}` };
  }

  async function mailTo(address: string): Promise<SmtpSink['mails'][number]> {
    return waitFor(() => smtp.mails.find((m) => m.to.includes(address)) ?? false, { what: `mail to ${address}` }) as Promise<SmtpSink['mails'][number]>;
  }
  async function smsTo(phone: string): Promise<SmsApi['messages'][number]> {
    return waitFor(() => sms.messages.find((m) => m.to === phone) ?? false, { what: `SMS to ${phone}` }) as Promise<SmsApi['messages'][number]>;
  }

  it("a leaked ingest URL is no SMS pump: past RATE_LIMIT_GUEST_MESSAGES_PER_HOUR a company's guest messages are recorded not sent (rate limited)", async () => {
    const company = `co-${randomUUID().slice(0, 6)}`;
    const guests = Array.from({ length: 7 }, guest);
    for (const g of guests) await publish(accessEvent(company, 'access.provisioned', { guest: g, credentials: [credential('PASSCODE')] }));
    const settled = () => models().GuestMessage.find({ company_id: company, channel: 'sms' }).lean();
    await waitFor(async () => (await settled()).every((m) => m.status !== 'pending') && (await settled()).length === 7, { what: 'seven SMS settled' });
    const all = await settled();
    expect(all.filter((m) => m.status === 'sent')).toHaveLength(5);
    expect(all.filter((m) => m.status === 'not_sent').map((m) => [m.reason, m.last_error])).toEqual([
      ['rate_limited', 'rate limited: more than 5 guest messages of this channel per hour for the company'],
      ['rate_limited', 'rate limited: more than 5 guest messages of this channel per hour for the company'],
    ]);
    expect(sms.messages.filter((m) => guests.some((g) => g.phone === m.to))).toHaveLength(5);
    // another company is not affected
    const other = guest();
    await publish(accessEvent(`co-${randomUUID().slice(0, 6)}`, 'access.provisioned', { guest: other, credentials: [credential('PASSCODE')] }));
    await smsTo(other.phone);
  });

  it.each([
    ['PASSCODE', 'door code 482913'],
    ['CARD', 'your key card CARD-0042'],
    ['EKEY', 'mobile key: https://keys.harbour.test/k/'],
  ] as const)('%s: e-mail (text and HTML) and SMS say where, when and how', async (type, how) => {
    const g = guest();
    const msg = await publish(
      accessEvent(`co-${randomUUID().slice(0, 6)}`, 'access.provisioned', {
        guest: g,
        credentials: [credential(type, { lockLocationType: 'cabinet', roomNumber: null, roomName: '101', bedNumber: 'B', bedId: 'bed-b' })],
      }),
    );
    const mail = await mailTo(g.email);
    expect(mail.from).toBe('access@harbour.test');
    expect(mail.text).toContain(`Subject: Your access for booking ${msg.reference_id}`);
    expect(mail.text).toContain('Content-Type: text/plain');
    expect(mail.text).toContain('Content-Type: text/html');
    expect(mail.text).toContain('Hello Ada Lovelace,');
    expect(mail.text).toContain('Where: Harbour House, room 101, bed B, cabinet');
    expect(mail.text).toContain('When: 1 Dec 2026, 14:00 UTC to 4 Dec 2026, 10:00 UTC (site time zone unknown)');
    expect(mail.text).toContain(`How: ${how}`);
    expect(mail.text).toContain('<b>Where:</b> Harbour House, room 101, bed B, cabinet');

    const text = await smsTo(g.phone);
    expect(text.from).toBe('+15550001111');
    expect(text.path).toBe('/2010-04-01/Accounts/AC0123456789/Messages.json');
    expect(text.authorization).toBe(`Basic ${Buffer.from('AC0123456789:sms-auth-token').toString('base64')}`);
    expect(text.body).toContain(`Booking ${msg.reference_id}`);
    expect(text.body).toContain('Harbour House, room 101, bed B, cabinet');
    expect(text.body).toContain(how);
    if (type === 'EKEY') expect(text.body).toContain(`https://keys.harbour.test/k/${msg.reference_id}`);
  });

  it("times are in the site's time zone when the event names it", async () => {
    const g = guest();
    await publish(accessEvent(`co-${randomUUID().slice(0, 6)}`, 'access.provisioned', { guest: g, site_time_zone: 'America/New_York' }));
    const mail = await mailTo(g.email);
    expect(mail.text).toContain('When: 1 Dec 2026, 09:00 EST to 4 Dec 2026, 05:00 EST (America/New_York time)');
  });

  it("the issue's New York stay: the e-mail and the SMS say 15:00 EST on 9 March to 11:00 EDT on 11 March", async () => {
    const g = guest();
    const validity = { check_in: '2030-03-09T20:00:00.000Z', check_out: '2030-03-11T15:00:00.000Z' };
    await publish(accessEvent(`co-${randomUUID().slice(0, 6)}`, 'access.provisioned', { guest: g, site_time_zone: 'America/New_York', validity }));
    const when = '9 Mar 2030, 15:00 EST to 11 Mar 2030, 11:00 EDT (America/New_York time)';
    expect((await mailTo(g.email)).text).toContain(`When: ${when}`);
    expect((await smsTo(g.phone)).body).toContain(`: ${when}.`);
  });

  it('revocation sends a short notice; a failed provisioning sends the guest nothing', async () => {
    const g = guest();
    const revoked = await publish(accessEvent(`co-${randomUUID().slice(0, 6)}`, 'access.revoked', { guest: g }));
    const mail = await mailTo(g.email);
    expect(mail.text).toContain(`Subject: Your access for booking ${revoked.reference_id} has ended`);
    expect(mail.text).not.toContain('482913');
    expect((await smsTo(g.phone)).body).toBe(`Your access for booking ${revoked.reference_id} has been cancelled.`);

    const g2 = guest();
    const failed = await publish(accessEvent(`co-${randomUUID().slice(0, 6)}`, 'access.failed', { guest: g2 }));
    await waitFor(async () => (await vhost.queue(QUEUES.dispatcherAccessEvents.name))?.messages === 0, { what: 'the access events consumed' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await models().GuestMessage.countDocuments({ event_id: failed.event_id })).toBe(0);
    expect(smtp.mails.some((m) => m.to.includes(g2.email))).toBe(false);
    expect(sms.messages.some((m) => m.to === g2.phone)).toBe(false);
  });

  it('an SMS provider error is retried like a callback', async () => {
    const g = guest();
    smsFailures.set(g.phone, 1);
    const msg = await publish(accessEvent(`co-${randomUUID().slice(0, 6)}`, 'access.provisioned', { guest: g }));
    await smsTo(g.phone);
    const doc = await waitFor(() => models().GuestMessage.findOne({ event_id: msg.event_id, channel: 'sms', status: 'sent' }).lean(), { what: 'sms sent' });
    expect(doc?.attempts).toBe(2);
  });

  it('a refused e-mail address or phone number is reported, not retried, and never holds the customer callback', async () => {
    const companyId = `co-${randomUUID().slice(0, 6)}`;
    await publisher.publish(EXCHANGES.identityEvents.name, '', endpointEvent(companyId, callbacks.url, { type: 'bearer', token: 't' }, key, 1), {
      signWith: parseSecretsKey(TEST_IDENTITY_EVENTS_KEY),
    });
    await waitFor(() => models().Endpoint.exists({ company_id: companyId }), { what: 'endpoint replica' });
    const msg = await publish(accessEvent(companyId, 'access.provisioned', { guest: { email: 'nobody@guest.test', phone: '+000' } }));
    await waitFor(() => callbacks.received.find((c) => c.body.eventId === msg.event_id), { what: 'the customer callback' });
    const email = await waitFor(() => models().GuestMessage.findOne({ event_id: msg.event_id, channel: 'email', status: 'failed' }).lean(), {
      what: 'email failed',
    });
    const text = await waitFor(() => models().GuestMessage.findOne({ event_id: msg.event_id, channel: 'sms', status: 'failed' }).lean(), {
      what: 'sms failed',
    });
    expect(email?.last_error).toMatch(/^SMTP: 550 .*Recipient address rejected/);
    expect(text?.last_error).toMatch(/^SMS provider answered 400: The 'To' number \+000 is not a valid phone number/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await models().GuestMessage.findById(email?._id).lean())?.attempts).toBe(1);
    expect((await models().GuestMessage.findById(text?._id).lean())?.attempts).toBe(1);
    expect(text_()).toContain('guest message refused; not retried');
    const metrics = (await axios.get(`${app.url}/metrics`)).data as string;
    expect(metrics).toMatch(/guest_messages_failed_total\{[^}]*channel="email"[^}]*outcome="refused"[^}]*\} 1/);
    // the admin listing reports them with the reference's deliveries
    const res = await axios.get(`${app.url}/admin/v1/companies/${companyId}/deliveries`, {
      params: { referenceId: msg.reference_id },
      headers: { Authorization: 'Bearer dev-admin-token' },
    });
    expect(res.data.data.guestMessages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          channel: 'email',
          status: 'failed',
          reason: null,
          attempts: 1,
          lastError: expect.stringMatching(/^SMTP: 550 /),
          sentAt: null,
        }),
        expect.objectContaining({
          channel: 'sms',
          status: 'failed',
          reason: null,
          attempts: 1,
          lastError: expect.stringMatching(/^SMS provider answered 400/),
          sentAt: null,
        }),
      ]),
    );
  });

  it("a callback endpoint that hangs does not hold the guest's e-mail (the callback's first attempt runs beside it)", async () => {
    const hanging = await startReceiver({ reply: () => 'hang' });
    try {
      const companyId = `co-${randomUUID().slice(0, 6)}`;
      await publisher.publish(EXCHANGES.identityEvents.name, '', endpointEvent(companyId, hanging.url, { type: 'bearer', token: 't' }, key, 1), {
        signWith: parseSecretsKey(TEST_IDENTITY_EVENTS_KEY),
      });
      await waitFor(() => models().Endpoint.exists({ company_id: companyId }), { what: 'endpoint replica' });
      const g = guest();
      const started = Date.now();
      await publish(accessEvent(companyId, 'access.provisioned', { guest: g }));
      await mailTo(g.email);
      // CALLBACK_TIMEOUT_MS is 2000: the mail did not wait for the attempt to give up.
      expect(Date.now() - started).toBeLessThan(1500);
      expect(hanging.hits()).toBe(1);
    } finally {
      await hanging.close();
    }
  });

  const text_ = () => text();
});

/** A dispatcher of its own (vhost, database) with `extra` configuration, and a publisher of sealed access events to it; `cleanups` stops them. */
async function ownDispatcher(name: string, extra: Record<string, string | undefined>, cleanups: (() => Promise<void>)[]) {
  const vhost = await createVhost(name);
  const dbName = uniqueDbName(name.replace(/-/g, '_'));
  const app = await start(dispatcherConfig(vhost.url, dbName, extra as Record<string, string>), captureLogger('callback-dispatcher').logger);
  const publisher = createBroker({ url: vhost.url, logger: captureLogger('publisher').logger, connectionName: 'test-publisher' });
  cleanups.push(async () => {
    await publisher.close(0);
    await app.stop();
    await vhost.remove();
    await dropDatabases(dbName);
  });
  await publisher.declareExchanges([EXCHANGES.accessEvents]);
  await publisher.connect();
  const publish = async (msg: AccessEventMessage) => {
    await publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)));
    return msg;
  };
  return { app, publish, models: () => dispatcherModels(app.ctx.db) };
}

/**
 * Issue 51: the portal's booking page tells the guest message's real outcome. Each outcome through
 * the real path (access event on the broker, the dispatcher's consumers, the SMS stand-in), read from
 * the listing the portal reads: sent with its channel; not sent for want of contact data, or of a
 * configured channel (an e-mail address given while SMTP_HOST is unset: the page used to say the
 * booking had no e-mail address).
 */
describe('callback-dispatcher: each guest message outcome, as the booking page reads it', () => {
  const cleanups: (() => Promise<void>)[] = [];
  let sms: SmsApi;
  let own: Awaited<ReturnType<typeof ownDispatcher>>;
  beforeAll(async () => {
    sms = await startSmsApi();
    own = await ownDispatcher(
      'dispatcher-guest-outcomes',
      {
        SMTP_HOST: undefined, // e-mail not configured
        SMS_API_URL: sms.url,
        SMS_ACCOUNT_SID: 'AC0123456789',
        SMS_AUTH_TOKEN: 'sms-auth-token',
        SMS_FROM: '+15550001111',
      },
      cleanups,
    );
  });
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    await sms?.close();
  });

  const listing = async (companyId: string, referenceId: string) =>
    (
      await axios.get(`${own.app.url}/admin/v1/companies/${companyId}/deliveries`, {
        params: { referenceId },
        headers: { Authorization: 'Bearer dev-admin-token' },
      })
    ).data.data.guestMessages as Record<string, unknown>[];
  const settledListing = (companyId: string, referenceId: string, count: number) =>
    waitFor(
      async () => {
        const l = await listing(companyId, referenceId);
        return l.length === count && l.every((m) => m.status !== 'pending') ? l : undefined;
      },
      { what: `${count} settled guest messages of ${referenceId}` },
    );

  it('e-mail given, e-mail channel not configured: recorded not sent (channel_not_configured) with the reason; the SMS beside it sent, with its time', async () => {
    const companyId = `co-${randomUUID().slice(0, 6)}`;
    const phone = `+44700${Math.floor(Math.random() * 1e6)}`;
    const msg = await own.publish(
      accessEvent(companyId, 'access.provisioned', { guest: { name: 'Ada', email: `ada.${randomUUID().slice(0, 8)}@guest.test`, phone } }),
    );
    const messages = await settledListing(companyId, msg.reference_id, 2);
    expect(messages).toEqual(
      expect.arrayContaining([
        {
          id: expect.any(String),
          channel: 'email',
          event: 'access.provisioned',
          eventId: msg.event_id,
          status: 'not_sent',
          reason: 'channel_not_configured',
          attempts: 0,
          lastError: 'the e-mail channel is not configured (SMTP_HOST unset)',
          createdAt: expect.any(String),
          sentAt: null,
        },
        {
          id: expect.any(String),
          channel: 'sms',
          event: 'access.provisioned',
          eventId: msg.event_id,
          status: 'sent',
          reason: null,
          attempts: 1,
          lastError: null,
          createdAt: expect.any(String),
          sentAt: expect.any(String),
        },
      ]),
    );
    expect(sms.messages.filter((m) => m.to === phone)).toHaveLength(1);
  });

  it('a booking with neither e-mail nor phone: one record, not sent (no_contact), for each access event that issued or revoked; a failed provisioning records nothing', async () => {
    const companyId = `co-${randomUUID().slice(0, 6)}`;
    const provisioned = await own.publish(accessEvent(companyId, 'access.provisioned', { guest: { name: 'No Contact' } }));
    const revoked = await own.publish(accessEvent(companyId, 'access.revoked', { reference_id: provisioned.reference_id }));
    const failed = await own.publish(accessEvent(companyId, 'access.failed', { reference_id: provisioned.reference_id, guest: { email: 'x@guest.test' } }));
    const messages = await settledListing(companyId, provisioned.reference_id, 2);
    const expected = (m: AccessEventMessage) => ({
      id: expect.any(String),
      channel: null,
      event: m.type,
      eventId: m.event_id,
      status: 'not_sent',
      reason: 'no_contact',
      attempts: 0,
      lastError: 'the booking had no e-mail address or phone number',
      createdAt: expect.any(String),
      sentAt: null,
    });
    expect(messages).toEqual(expect.arrayContaining([expected(provisioned), expected(revoked)]));
    expect(await own.models().GuestMessage.countDocuments({ event_id: failed.event_id })).toBe(0);
  });
});

/**
 * Issue 46: with SMTP_PORT=587 a relay that offered no STARTTLS got the guest's passcode in clear, and
 * any certificate was accepted. By default now neither is sent; SMTP_ALLOW_PLAINTEXT (a local relay) sends both.
 */
describe('callback-dispatcher: guest e-mail goes over verified TLS unless SMTP_ALLOW_PLAINTEXT', () => {
  const relays: SmtpSink[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    await Promise.all(relays.map((r) => r.close()));
  });

  /** A dispatcher on a relay, its own vhost and database; sends one e-mail and answers how it ended. */
  async function mailThrough(relay: SmtpSink, allowPlaintext: boolean) {
    const own = await ownDispatcher(
      'dispatcher-smtp-tls',
      { SMTP_PORT: String(relay.port), ...(allowPlaintext ? { SMTP_ALLOW_PLAINTEXT: 'true' } : {}) },
      cleanups,
    );
    const to = `guest.${randomUUID().slice(0, 8)}@guest.test`;
    const msg = await own.publish(
      accessEvent(`co-${randomUUID().slice(0, 6)}`, 'access.provisioned', { guest: { email: to }, credentials: [credential('PASSCODE')] }),
    );
    const settled = await waitFor(
      async () => {
        const m = await own.models().GuestMessage.findOne({ event_id: msg.event_id, channel: 'email' }).lean();
        return m && m.status !== 'pending' ? m : undefined;
      },
      { what: 'the e-mail settled', timeoutMs: 20_000 },
    );
    return { status: settled.status, lastError: settled.last_error, received: relay.mails.filter((m) => m.to.includes(to)).length };
  }

  it('a relay that offers no STARTTLS: not sent in clear (failed, with the reason); with the opt-out, sent', async () => {
    const plain = await startSmtpSink();
    relays.push(plain);
    expect(await mailThrough(plain, false)).toEqual({
      status: 'failed',
      lastError: 'SMTP: the mail relay offers no TLS (STARTTLS): not sent in clear (SMTP_ALLOW_PLAINTEXT is for a local relay)',
      received: 0,
    });
    expect(await mailThrough(plain, true)).toEqual({ status: 'sent', lastError: null, received: 1 });
  });

  it('a relay whose certificate does not verify: not sent; with the opt-out, sent', async () => {
    const untrusted = await startSmtpSink({ starttls: true });
    relays.push(untrusted);
    expect(await mailThrough(untrusted, false)).toEqual({
      status: 'failed',
      lastError: expect.stringMatching(/^SMTP: the mail relay's TLS certificate does not verify \(.+\): not sent$/),
      received: 0,
    });
    expect(await mailThrough(untrusted, true)).toEqual({ status: 'sent', lastError: null, received: 1 });
  });
});
