import type { Request, Response, Router } from 'express';
import { ReceivedMail, ReceivedSms, SmtpSink, smsApi, startSmtpSink } from '@smartlock/sinks';
import type { Config } from '../config';

/** The last messages of each channel the page shows (older ones are dropped: a demo runs for days). */
const KEEP = 200;

export interface GuestSink {
  /** The SMS API under /sms, the page at /sim/guest-messages (and its data as JSON). */
  routes(app: Router): void;
  close(): Promise<void>;
}

/**
 * `npm start`'s guest-message providers (SIM_GUEST_SINK, development only): a mail relay on
 * SIM_SMTP_PORT and a Twilio-style SMS API under /sms, which keep what the callback-dispatcher sends
 * to guests, and a page that shows it, so a newcomer reads the e-mail a guest gets. Nothing leaves
 * the machine. Off (null) unless configured; the configuration refuses it in production.
 */
export async function startGuestSink(config: Pick<Config, 'SIM_GUEST_SINK' | 'SIM_SMTP_PORT'>): Promise<GuestSink | null> {
  if (!config.SIM_GUEST_SINK) return null;
  const smtp = await startSmtpSink({ port: config.SIM_SMTP_PORT, keep: KEEP });
  const sms = smsApi({ keep: KEEP });
  return {
    routes(app) {
      app.use('/sms', sms.handler);
      app.get('/sim/guest-messages.json', (_req: Request, res: Response) => {
        res.json({ mails: [...smtp.mails].reverse().map(mailView), sms: [...sms.messages].reverse().map(smsView) });
      });
      app.get('/sim/guest-messages', (_req: Request, res: Response) => {
        // The e-mails' HTML is shown in sandboxed frames (no scripts, no same origin).
        res.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; img-src data:");
        res.type('html').send(page(smtp, sms.messages));
      });
    },
    close: () => smtp.close(),
  };
}

const mailView = (m: ReceivedMail) => ({ at: m.at.toISOString(), from: m.from, to: m.to, subject: m.subject, text: m.textBody, html: m.htmlBody });
const smsView = (m: ReceivedSms) => ({ at: m.at.toISOString(), to: m.to, from: m.from, body: m.body });

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);
const time = (d: Date) => `<time datetime="${d.toISOString()}">${esc(d.toISOString().replace('T', ' ').slice(0, 19))} UTC</time>`;

function mailArticle(m: ReceivedMail, i: number): string {
  const id = `mail-${i}`;
  return `<article class="item" aria-labelledby="${id}">
  <h3 id="${id}">${esc(m.subject || '(no subject)')}</h3>
  <dl class="facts"><dt>To</dt><dd>${esc(m.to.join(', '))}</dd><dt>From</dt><dd>${esc(m.from)}</dd><dt>Received</dt><dd>${time(m.at)}</dd></dl>
  ${m.htmlBody ? `<iframe title="The e-mail as the guest sees it: ${esc(m.subject)}" sandbox srcdoc="${esc(m.htmlBody)}"></iframe>` : ''}
  ${m.textBody !== null ? `<details${m.htmlBody ? '' : ' open'}><summary>Plain-text version</summary><pre>${esc(m.textBody)}</pre></details>` : ''}
</article>`;
}

function page(smtp: SmtpSink, texts: ReceivedSms[]): string {
  const mails = [...smtp.mails].reverse();
  const sms = [...texts].reverse();
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Guest messages (development)</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #f4f6f8; }
  main { max-width: 960px; margin: 0 auto; padding: 1rem; }
  .lead { color: #3d4651; }
  .note { background: #fff4d6; border: 1px solid #c99a00; padding: .5rem .75rem; border-radius: 6px; }
  section, .item { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 1rem; margin: 1rem 0; }
  .item { margin: .75rem 0; }
  h3 { margin: 0 0 .5rem; font-size: 1.05rem; }
  .facts { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: 0 0 .75rem; }
  .facts dt { font-weight: 600; }
  .facts dd { margin: 0; overflow-wrap: anywhere; }
  iframe { width: 100%; min-height: 260px; border: 1px solid #d0d7de; border-radius: 6px; background: #fff; }
  pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; padding: .75rem; border-radius: 6px; }
  table { width: 100%; border-collapse: collapse; }
  th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid #d0d7de; vertical-align: top; overflow-wrap: anywhere; }
  td.nowrap { white-space: nowrap; overflow-wrap: normal; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  @media (max-width: 600px) { thead { display: none; } tr, td { display: block; } td::before { content: attr(data-label) ": "; font-weight: 600; } }
</style>
</head>
<body>
<main>
<h1>Guest messages</h1>
<p class="lead">What the callback-dispatcher sent to guests: kept by the lock-cloud simulator's mail relay (SMTP on port ${smtp.port}) and SMS API (<code>/sms</code>), newest first, the last ${KEEP} of each. Reload for new ones.</p>
<p class="note">Development only (<code>SIM_GUEST_SINK</code>): nothing here reached a guest.</p>
<section aria-labelledby="mails-head">
<h2 id="mails-head">E-mails (${mails.length})</h2>
${mails.length ? mails.map(mailArticle).join('\n') : '<p>No e-mail yet. Send a booking with <code>guest.email</code>.</p>'}
</section>
<section aria-labelledby="sms-head">
<h2 id="sms-head">SMS (${sms.length})</h2>
${
  sms.length
    ? `<table><caption class="visually-hidden">Text messages, newest first</caption><thead><tr><th scope="col">Received</th><th scope="col">To</th><th scope="col">From</th><th scope="col">Text</th></tr></thead><tbody>
${sms.map((m) => `<tr><td data-label="Received" class="nowrap">${time(m.at)}</td><td data-label="To" class="nowrap">${esc(m.to)}</td><td data-label="From" class="nowrap">${esc(m.from)}</td><td data-label="Text">${esc(m.body)}</td></tr>`).join('\n')}
</tbody></table>`
    : '<p>No SMS yet. Send a booking with <code>guest.phone</code>.</p>'
}
</section>
</main>
</body>
</html>`;
}
