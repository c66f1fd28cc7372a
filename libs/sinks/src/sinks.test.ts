import axios from 'axios';
import nodemailer from 'nodemailer';
import { startSmsApi, startSmtpSink } from './index';

describe('the guest-message sinks: what a provider would have delivered, kept and readable', () => {
  it('the SMTP sink keeps a message as nodemailer sends it: subject (encoded words too), text and HTML parts decoded', async () => {
    const sink = await startSmtpSink({ refuse: (a) => a.endsWith('@refused.test'), keep: 2 });
    try {
      const transport = nodemailer.createTransport({ host: sink.host, port: sink.port, secure: false, ignoreTLS: true });
      const html = `<p>Your door code: <b>482913</b> — Zimmer 101, Größe ${'x'.repeat(100)}</p>`;
      await transport.sendMail({ from: 'keys@hotel.test', to: 'ada@guest.test', subject: 'Ihr Zugang für Zimmer 101', text: 'Door code 482913 — Größe', html });
      expect(sink.mails).toEqual([
        expect.objectContaining({
          from: 'keys@hotel.test',
          to: ['ada@guest.test'],
          subject: 'Ihr Zugang für Zimmer 101',
          textBody: 'Door code 482913 — Größe',
          htmlBody: html,
          at: expect.any(Date),
        }),
      ]);
      await expect(transport.sendMail({ from: 'keys@hotel.test', to: 'nobody@refused.test', subject: 's', text: 't' })).rejects.toMatchObject({
        responseCode: 550,
      });
      for (const n of [2, 3]) await transport.sendMail({ from: 'keys@hotel.test', to: `g${n}@guest.test`, subject: `mail ${n}`, text: 't' });
      // `keep`: the oldest dropped
      expect(sink.mails.map((m) => m.subject)).toEqual(['mail 2', 'mail 3']);
      transport.close();
    } finally {
      await sink.close();
    }
  });

  it('the SMS API answers as the provider does: 201 and kept; 400 (21211) for a number that is not E.164; 404 elsewhere; `reply` overrides', async () => {
    const api = await startSmsApi({ reply: (to) => (to === '+15550009999' ? 503 : undefined) });
    try {
      const send = (to: string, path = '/2010-04-01/Accounts/AC1/Messages.json') =>
        axios.post(`${api.url}${path}`, new URLSearchParams({ To: to, From: '+15550000000', Body: 'Door code 482913' }).toString(), {
          auth: { username: 'AC1', password: 'token' },
          validateStatus: () => true,
        });
      expect((await send('+447700900123')).status).toBe(201);
      expect(await send('0770')).toMatchObject({ status: 400, data: { code: 21211, message: "The 'To' number 0770 is not a valid phone number." } });
      expect((await send('+15550009999')).status).toBe(503);
      expect((await send('+447700900123', '/other')).status).toBe(404);
      expect(api.messages).toEqual([
        {
          at: expect.any(Date),
          accountSid: 'AC1',
          to: '+447700900123',
          from: '+15550000000',
          body: 'Door code 482913',
          authorization: `Basic ${Buffer.from('AC1:token').toString('base64')}`,
          path: '/2010-04-01/Accounts/AC1/Messages.json',
        },
      ]);
    } finally {
      await api.close();
    }
  });
});
