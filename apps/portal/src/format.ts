const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A date-time of the API for people, in their locale and time zone; '—' for none. */
export const when = (iso: string | null | undefined): string => (iso ? DATE_TIME.format(new Date(iso)) : '—');

const TO_THE_SECOND = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
/** The same to the second: what happened within a minute, in order (a booking's timeline). */
export const whenExact = (iso: string | null | undefined): string => (iso ? TO_THE_SECOND.format(new Date(iso)) : '—');

export type Status = 'active' | 'revoked' | 'expired';

/** A key's or token's state: revoked wins over expired. */
export function statusOf(item: { revoked_at: string | null; expires_at: string | null }, now = Date.now()): Status {
  if (item.revoked_at) return 'revoked';
  if (item.expires_at && new Date(item.expires_at).getTime() <= now) return 'expired';
  return 'active';
}
