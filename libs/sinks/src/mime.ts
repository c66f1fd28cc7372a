/** Quoted-printable soft breaks and escapes undone (as UTF-8 bytes). */
function fromQuotedPrintable(s: string): string {
  const bytes = s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function headerOf(head: string, name: string): string | null {
  const m = new RegExp(`^${name}:[ \\t]*((?:.*)(?:\\r?\\n[ \\t].*)*)`, 'im').exec(head);
  return m ? m[1].replace(/\r?\n[ \t]+/g, ' ').trim() : null;
}

/** An encoded word of a header (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`) as text. */
function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=\s*/gi, (_m, _charset: string, enc: string, text: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : fromQuotedPrintable(text.replace(/_/g, ' ')),
  );
}

function split(raw: string): { head: string; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  return at < 0 ? { head: raw, body: '' } : { head: raw.slice(0, at), body: raw.slice(at).replace(/^\r?\n\r?\n/, '') };
}

function decodeBody(head: string, body: string): string {
  const encoding = (headerOf(head, 'Content-Transfer-Encoding') ?? '7bit').toLowerCase();
  if (encoding === 'quoted-printable') return fromQuotedPrintable(body);
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/**
 * What a reader of a received message wants: its subject, its text and HTML parts decoded, and the
 * whole message with quoted-printable undone. Enough MIME for what nodemailer sends (a single part,
 * or multipart/alternative or mixed, quoted-printable, base64 or 7bit); not a general parser.
 */
export function readMail(raw: string): { subject: string; text: string | null; html: string | null; decoded: string } {
  const { head, body } = split(raw);
  const parts: { type: string; content: string }[] = [];
  const walk = (h: string, b: string) => {
    const type = (headerOf(h, 'Content-Type') ?? 'text/plain').toLowerCase();
    const boundary = /boundary="?([^";]+)"?/i.exec(headerOf(h, 'Content-Type') ?? '')?.[1];
    if (type.startsWith('multipart/') && boundary) {
      for (const chunk of b.split(`--${boundary}`).slice(1)) {
        if (chunk.startsWith('--')) break;
        const part = split(chunk.replace(/^\r?\n/, ''));
        walk(part.head, part.body);
      }
      return;
    }
    parts.push({ type, content: decodeBody(h, b).replace(/\r?\n$/, '') });
  };
  walk(head, body);
  const find = (t: string) => parts.find((p) => p.type.startsWith(t))?.content ?? null;
  return { subject: decodeWords(headerOf(head, 'Subject') ?? ''), text: find('text/plain'), html: find('text/html'), decoded: fromQuotedPrintable(raw) };
}
