const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * A date-time of the API for people, in their locale and their own time zone, named ("9 Mar 2030,
 * 14:00 CET"): beside a booking's times, which are the site's (atSite), the zone says which is which.
 * '—' for none.
 */
export const when = (iso: string | null | undefined): string => {
  if (!iso) return '—';
  const d = new Date(iso);
  return `${DATE_TIME.format(d)} ${zoneName(d, undefined)}`;
};

/** A zone's abbreviation at an instant (undefined: the browser's own): the US name (EST), else the British one (CET), else the offset (GMT+9). */
function zoneName(d: Date, timeZone: string | undefined): string {
  const names = ['en-US', 'en-GB'].map(
    (l) => new Intl.DateTimeFormat(l, { timeZone, timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName')?.value ?? timeZone ?? '',
  );
  return names.find((n) => !/^GMT[+-]/.test(n)) ?? names[0];
}

/**
 * A date-time as the property reads it: in its site's zone with the zone's abbreviation
 * ("9 Mar 2030, 15:00 EST"), and the same instant in UTC (for a title). Until the site has a zone,
 * in UTC, labelled so. `seconds`: to the second (what happened within a minute, in order: a
 * booking's timeline).
 */
export function atSite(iso: string | null | undefined, timeZone: string | null | undefined, opts: { seconds?: boolean } = {}): { text: string; utc: string } {
  if (!iso) return { text: '—', utc: '' };
  // A date or a zone-less time as the hotel sent it (pending): the site's local time, shown as sent.
  if (!/(?:Z|[+-]\d{2}:?\d{2})$/i.test(iso)) return { text: `${iso.slice(0, 16).replace('T', ' ')} (site time)`, utc: '' };
  const d = new Date(iso);
  const utc = `${d
    .toISOString()
    .slice(0, opts.seconds ? 19 : 16)
    .replace('T', ' ')} UTC`;
  const zone = timeZone ?? 'UTC';
  const local = new Intl.DateTimeFormat(undefined, {
    timeZone: zone,
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    ...(opts.seconds ? { second: '2-digit' } : {}),
  }).format(d);
  return { text: `${local} ${timeZone ? zoneName(d, timeZone) : 'UTC'}`, utc };
}

const TO_THE_SECOND = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
/** The same to the second: what happened within a minute, in order (a booking's timeline). */
export const whenExact = (iso: string | null | undefined): string => {
  if (!iso) return '—';
  const d = new Date(iso);
  return `${TO_THE_SECOND.format(d)} ${zoneName(d, undefined)}`;
};

export type Status = 'active' | 'revoked' | 'expired';

/** A key's or token's state: revoked wins over expired. */
export function statusOf(item: { revoked_at: string | null; expires_at: string | null }, now = Date.now()): Status {
  if (item.revoked_at) return 'revoked';
  if (item.expires_at && new Date(item.expires_at).getTime() <= now) return 'expired';
  return 'active';
}
