import axios from 'axios';
import nodemailer from 'nodemailer';
import type { GuestChannel } from '@smartlock/contracts';
import { PermanentError, TransientError } from '@smartlock/messaging';
import type { EmailContent } from './compose';

export type EmailSender = (to: string, content: EmailContent) => Promise<void>;
export type SmsSender = (to: string, text: string) => Promise<void>;

/** Why a message of `channel` is not sent when the service has no relay or provider for it (recorded, shown on the portal's booking page). */
export const channelNotConfigured = (channel: GuestChannel): string =>
  channel === 'email' ? 'the e-mail channel is not configured (SMTP_HOST unset)' : 'the SMS channel is not configured (SMS_API_URL unset)';

/** A TLS failure of the connection's own checks (nodemailer reports it as a socket error with the TLS message). */
const CERTIFICATE_ERROR = /certificate|self[- ]signed|unable to verify|hostname|altnames/i;

/**
 * SMTP through nodemailer. The message carries the guest's credential, so it goes over TLS with a
 * verified certificate (from the start with `secure`, else STARTTLS, required); a relay that offers
 * no TLS, or a certificate that does not verify, fails the message with the reason, never sent in
 * clear. `allowPlaintext` (SMTP_ALLOW_PLAINTEXT) is for a local relay only: STARTTLS when offered,
 * any certificate. A 5xx reply (a refused recipient, a mailbox that does not exist) is permanent; a
 * 4xx, a timeout or a lost connection is retried.
 */
export function createEmailSender(opts: {
  host: string;
  port: number;
  secure: boolean;
  allowPlaintext: boolean;
  user?: string;
  pass?: string;
  from: string;
  timeoutMs: number;
}): { send: EmailSender; close: () => void } {
  const transport = nodemailer.createTransport({
    host: opts.host,
    port: opts.port,
    secure: opts.secure,
    auth: opts.user ? { user: opts.user, pass: opts.pass } : undefined,
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.timeoutMs,
    requireTLS: !opts.secure && !opts.allowPlaintext,
    tls: { rejectUnauthorized: !opts.allowPlaintext },
  });
  return {
    async send(to, content) {
      try {
        await transport.sendMail({ from: opts.from, to, subject: content.subject, text: content.text, html: content.html });
      } catch (err) {
        // The server's reply, else the error's code: a connection error's message names the relay's address.
        const e = err as { responseCode?: number; response?: string; code?: string; message?: string };
        if (e.code === 'ETLS')
          throw new PermanentError('SMTP: the mail relay offers no TLS (STARTTLS): not sent in clear (SMTP_ALLOW_PLAINTEXT is for a local relay)');
        if (e.code === 'ESOCKET' && CERTIFICATE_ERROR.test(e.message ?? ''))
          throw new PermanentError(`SMTP: the mail relay's TLS certificate does not verify (${e.message}): not sent`);
        const reason = `SMTP: ${e.response ?? `no answer from the mail relay (${e.code ?? 'connection failed'})`}`;
        if (e.responseCode !== undefined && e.responseCode >= 500 && e.responseCode < 600) throw new PermanentError(reason);
        throw new TransientError(reason);
      }
    },
    close: () => transport.close(),
  };
}

/**
 * A Twilio-style SMS API: POST form-encoded To, From, Body to
 * `${url}/2010-04-01/Accounts/{sid}/Messages.json` with basic auth (sid, token). A 400 (an invalid
 * or unreachable number) is permanent; anything else that is not 2xx is retried.
 */
export function createSmsSender(opts: { url: string; accountSid: string; authToken: string; from: string; timeoutMs: number }): SmsSender {
  const endpoint = `${opts.url.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(opts.accountSid)}/Messages.json`;
  return async (to, text) => {
    let res;
    try {
      res = await axios.post(endpoint, new URLSearchParams({ To: to, From: opts.from, Body: text }).toString(), {
        auth: { username: opts.accountSid, password: opts.authToken },
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        timeout: opts.timeoutMs,
        validateStatus: () => true,
      });
    } catch (err) {
      throw new TransientError(`SMS provider unreachable (${(err as { code?: string }).code ?? 'connection failed'})`);
    }
    if (res.status >= 200 && res.status < 300) return;
    const detail = typeof res.data === 'object' && res.data ? (res.data as { message?: string }).message : undefined;
    const reason = `SMS provider answered ${res.status}${detail ? `: ${detail}` : ''}`;
    if (res.status === 400) throw new PermanentError(reason);
    throw new TransientError(reason);
  };
}
