import type { AddressInfo } from 'node:net';
import { readMail } from './mime';

export interface ReceivedMail {
  at: Date;
  from: string;
  to: string[];
  /** The message as received. */
  raw: string;
  /** The raw message with quoted-printable soft breaks and escapes undone: read as written. */
  text: string;
  subject: string;
  /** The text/plain and text/html parts, decoded (null when the message has none). */
  textBody: string | null;
  htmlBody: string | null;
}

export interface SmtpSink {
  host: string;
  port: number;
  /** Oldest first; past `keep`, the oldest are dropped. */
  mails: ReceivedMail[];
  close(): Promise<void>;
}

/**
 * A real SMTP server (the smtp-server package) that keeps every message it accepts: the tests'
 * mail relay, and `npm start`'s (the lock-cloud simulator shows what it kept). Recipients for which
 * `refuse(address)` is true get a 550. Plain SMTP, unless `starttls`: then STARTTLS with
 * smtp-server's own self-signed certificate.
 */
export async function startSmtpSink(
  opts: { host?: string; port?: number; refuse?: (address: string) => boolean; starttls?: boolean; keep?: number } = {},
): Promise<SmtpSink> {
  // Loaded when a sink starts: a development dependency, never loaded by a production process.
  const { SMTPServer } = await import('smtp-server');
  const host = opts.host ?? '127.0.0.1';
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: opts.starttls ? [] : ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (opts.refuse?.(address.address)) {
        callback(Object.assign(new Error(`5.1.1 <${address.address}>: Recipient address rejected: User unknown`), { responseCode: 550 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const read = readMail(raw);
        mails.push({
          at: new Date(),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          text: read.decoded,
          subject: read.subject,
          textBody: read.text,
          htmlBody: read.html,
        });
        if (opts.keep && mails.length > opts.keep) mails.splice(0, mails.length - opts.keep);
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return { host, port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
