import { IANAZone } from 'luxon';
import { formatSiteTime, vendorLockOf, type AccessEventMessage, type CredentialRecord, type LockProvider } from '@smartlock/contracts';

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const validZone = (zone: string | undefined): string | undefined => (zone && IANAZone.isValidZone(zone) ? zone : undefined);

function where(c: CredentialRecord): string {
  const parts = [c.siteName];
  const room = c.roomName;
  if (room) parts.push(`room ${room}`);
  if (c.bedNumber) parts.push(`bed ${c.bedNumber}`);
  if (c.lockLocationType === 'cabinet') parts.push('cabinet');
  return parts.join(', ');
}

/** The brand a guest sees on the lock. */
const BRAND: Record<LockProvider, string> = { ttlock: 'TTLock', nuki: 'Nuki' };

/**
 * TTLock's lines read as they always have (its vocabulary is the service's own); another vendor's
 * code is typed on that lock's keypad, so the line says so and names the brand on the lock.
 */
function how(c: CredentialRecord, keyLink: string): string {
  const provider = vendorLockOf(c.lockId).provider;
  if (provider !== 'ttlock' && c.type === 'PASSCODE') {
    const lock = `the ${BRAND[provider]} lock`;
    return c.passcode ? `keypad code ${c.passcode} for ${lock} (enter it on its keypad)` : `a keypad code for ${lock} (ask the front desk)`;
  }
  switch (c.type) {
    case 'PASSCODE':
      return c.passcode ? `door code ${c.passcode}` : 'a door code (ask the front desk)';
    case 'CARD':
      return `your key card${c.card_id ? ` ${c.card_id}` : ''}`;
    case 'REMOTE':
      return `remote unlock in the app: ${keyLink}`;
    case 'EKEY':
      return `mobile key: ${keyLink}`;
  }
}

function keyLinkFor(base: string, msg: AccessEventMessage): string {
  return `${base.replace(/\/+$/, '')}/${encodeURIComponent(msg.reference_id)}`;
}

interface Summary {
  greeting: string;
  whenLine: string;
  lines: { where: string; how: string }[];
}

function summarise(msg: AccessEventMessage, linkBase: string): Summary {
  const zone = validZone(msg.site_time_zone);
  const tz = zone ?? 'UTC';
  const from = msg.validity?.check_in ?? msg.credentials[0]?.validFrom;
  const to = msg.validity?.check_out ?? msg.credentials[0]?.validTo;
  const zoneNote = zone ? `${zone} time` : 'site time zone unknown';
  // Each end with its own abbreviation: a stay across a change of the clocks says so (15:00 EST to 11:00 EDT).
  const whenLine = from && to ? `${formatSiteTime(from, tz)} to ${formatSiteTime(to, tz)} (${zoneNote})` : 'for the dates of your booking';
  const link = keyLinkFor(linkBase, msg);
  return {
    greeting: msg.guest?.name ? `Hello ${msg.guest.name},` : 'Hello,',
    whenLine,
    lines: msg.credentials.map((c) => ({ where: where(c), how: how(c, link) })),
  };
}

/** The guest's e-mail: where (site, room, bed), when (check-in to check-out) and how (code, card, link). */
export function composeEmail(msg: AccessEventMessage, linkBase: string): EmailContent {
  const s = summarise(msg, linkBase);
  if (msg.type === 'access.revoked') {
    const text = `${s.greeting}\n\nYour access for booking ${msg.reference_id} has been cancelled. Codes, cards and mobile keys of this booking no longer open the doors.\n`;
    return {
      subject: `Your access for booking ${msg.reference_id} has ended`,
      text,
      html: `<p>${escapeHtml(s.greeting)}</p><p>Your access for booking <b>${escapeHtml(msg.reference_id)}</b> has been cancelled. Codes, cards and mobile keys of this booking no longer open the doors.</p>`,
    };
  }
  const text = [
    s.greeting,
    '',
    `Your access for booking ${msg.reference_id} is ready.`,
    `When: ${s.whenLine}`,
    '',
    ...s.lines.map((l) => `Where: ${l.where}\nHow: ${l.how}`),
    '',
  ].join('\n');
  const html = [
    `<p>${escapeHtml(s.greeting)}</p>`,
    `<p>Your access for booking <b>${escapeHtml(msg.reference_id)}</b> is ready.</p>`,
    `<p><b>When:</b> ${escapeHtml(s.whenLine)}</p>`,
    '<ul>',
    ...s.lines.map((l) => `<li><b>Where:</b> ${escapeHtml(l.where)}<br><b>How:</b> ${escapeHtml(l.how)}</li>`),
    '</ul>',
  ].join('\n');
  return { subject: `Your access for booking ${msg.reference_id}`, text, html };
}

/** The SMS: the same facts, short. */
export function composeSms(msg: AccessEventMessage, linkBase: string): string {
  if (msg.type === 'access.revoked') return `Your access for booking ${msg.reference_id} has been cancelled.`;
  const s = summarise(msg, linkBase);
  return [`Booking ${msg.reference_id}: ${s.whenLine}.`, ...s.lines.map((l) => `${l.where}: ${l.how}`)].join(' ');
}
