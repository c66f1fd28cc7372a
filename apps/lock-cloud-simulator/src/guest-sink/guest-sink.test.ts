import axios from 'axios';
import nodemailer from 'nodemailer';
import { captureLogger, dropDatabases, freePort, MONGO_URL, uniqueDbName } from '@smartlock/testing';
import { readConfig } from '../config';
import { RunningSimulator, startSimulator } from '../sim-harness';

/**
 * Issue 51: under `npm start` a newcomer sees what a guest gets. With SIM_GUEST_SINK the simulator
 * is the guest-message providers (a mail relay, an SMS API) and shows what they kept; off by
 * default, and refused in production. (The whole path, the dispatcher sending to it: e2e portal.)
 */
describe('lock-cloud-simulator: the guest-message sink of npm start (SIM_GUEST_SINK)', () => {
  const dbs: string[] = [];
  const sims: RunningSimulator[] = [];
  const { logger } = captureLogger('sim-guest-sink');
  const simulator = async (env: Record<string, string> = {}) => {
    const dbName = uniqueDbName('sim_guest_sink');
    dbs.push(dbName);
    const sim = await startSimulator({ mongoUrl: MONGO_URL, dbName, logger, env });
    sims.push(sim);
    return sim;
  };
  afterAll(async () => {
    for (const s of sims) await s.stop();
    await dropDatabases(...dbs);
  });

  it('keeps an e-mail sent to its relay and an SMS posted to /sms, and shows both, the e-mail as the guest sees it', async () => {
    const smtpPort = await freePort();
    const sim = await simulator({ SIM_GUEST_SINK: 'true', SIM_SMTP_PORT: String(smtpPort) });
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({
      from: 'keys@hotel.test',
      to: 'ada@guest.test',
      subject: 'Your access for booking BK-1',
      text: 'How: door code 482913',
      html: '<p>How: door code <b>482913</b></p><script>alert(1)</script>',
    });
    transport.close();
    const sms = await axios.post(
      `${sim.url}/sms/2010-04-01/Accounts/ACdemo/Messages.json`,
      new URLSearchParams({ To: '+447700900123', From: '+15550000000', Body: 'Booking BK-1: door code 482913' }).toString(),
      {
        auth: { username: 'ACdemo', password: 'demo' },
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      },
    );
    expect(sms.status).toBe(201);
    const refused = await axios.post(`${sim.url}/sms/2010-04-01/Accounts/ACdemo/Messages.json`, 'To=0770&From=%2B1555&Body=x', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      validateStatus: () => true,
    });
    expect(refused.status).toBe(400);

    const kept = (await axios.get(`${sim.url}/sim/guest-messages.json`)).data;
    expect(kept).toEqual({
      mails: [
        {
          at: expect.any(String),
          from: 'keys@hotel.test',
          to: ['ada@guest.test'],
          subject: 'Your access for booking BK-1',
          text: 'How: door code 482913',
          html: '<p>How: door code <b>482913</b></p><script>alert(1)</script>',
        },
      ],
      sms: [{ at: expect.any(String), to: '+447700900123', from: '+15550000000', body: 'Booking BK-1: door code 482913' }],
    });
    const page = await axios.get(`${sim.url}/sim/guest-messages`);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.data).toContain('<h3 id="mail-0">Your access for booking BK-1</h3>');
    // the e-mail's HTML in a sandboxed frame, escaped into its srcdoc: never part of the page itself
    expect(page.data).toContain('sandbox srcdoc="&lt;p&gt;How: door code &lt;b&gt;482913&lt;/b&gt;&lt;/p&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(page.data).not.toContain('<script>');
    expect(page.data).toContain('<td data-label="Text">Booking BK-1: door code 482913</td>');
  });

  it('off by default: no relay, no /sms, no page; refused in production', async () => {
    const sim = await simulator();
    expect((await axios.get(`${sim.url}/sim/guest-messages`, { validateStatus: () => true })).status).toBe(404);
    expect(
      (
        await axios.post(`${sim.url}/sms/2010-04-01/Accounts/AC/Messages.json`, 'To=%2B447700900123', {
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          validateStatus: () => true,
        })
      ).status,
    ).toBe(404);
    expect(() =>
      readConfig({
        NODE_ENV: 'production',
        MONGO_URL,
        SIM_CLIENT_ID: 'c',
        SIM_CLIENT_SECRET: 's',
        SIM_USERNAME: 'u',
        SIM_PASSWORD: 'p',
        SIM_GUEST_SINK: 'true',
      }),
    ).toThrow(/SIM_GUEST_SINK is for development only/);
    expect(
      readConfig({ NODE_ENV: 'production', MONGO_URL, SIM_CLIENT_ID: 'c', SIM_CLIENT_SECRET: 's', SIM_USERNAME: 'u', SIM_PASSWORD: 'p' }).SIM_GUEST_SINK,
    ).toBe(false);
  });
});
