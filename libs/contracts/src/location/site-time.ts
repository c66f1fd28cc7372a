import Joi from 'joi';
import { DateTime, FixedOffsetZone, IANAZone } from 'luxon';

/** A site's local time (docs/adr/0107-site-local-time.md): its IANA zone and the hours a date-only stay starts and ends at. */
export interface SiteTime {
  time_zone: string;
  check_in_time: string;
  check_out_time: string;
}

export const SITE_TIME_DEFAULTS: SiteTime = { time_zone: 'UTC', check_in_time: '15:00', check_out_time: '11:00' };
export const SITE_TIME_FIELDS = ['time_zone', 'check_in_time', 'check_out_time'] as const;

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;

/** Why a site's time field is refused (naming the field), or undefined. Zones are checked against the runtime's tz database by Luxon. */
export function siteTimeProblem(field: (typeof SITE_TIME_FIELDS)[number], value: unknown): string | undefined {
  if (field === 'time_zone') {
    return typeof value === 'string' && value.length <= 64 && IANAZone.isValidZone(value)
      ? undefined
      : 'time_zone must be an IANA time zone name such as America/New_York';
  }
  return typeof value === 'string' && HH_MM.test(value) ? undefined : `${field} must be a time of day as HH:mm (00:00 to 23:59)`;
}

const field = (f: (typeof SITE_TIME_FIELDS)[number], description: string) =>
  Joi.string()
    .custom((value: string, helpers) => {
      const problem = siteTimeProblem(f, value);
      return problem ? helpers.message({ custom: problem }) : value;
    })
    .description(description);

/** The site object's time fields, as the layout import and the operator's PATCH take them. */
export const siteTimeFields = {
  time_zone: field('time_zone', 'IANA time zone of the site (e.g. America/New_York); default UTC'),
  check_in_time: field('check_in_time', 'local time a date-only check_in/start_date begins at, HH:mm; default 15:00'),
  check_out_time: field('check_out_time', 'local time a date-only check_out/end_date ends at, HH:mm; default 11:00'),
};

/** A site's time as stored or published, with the defaults for what is not set (layouts from before site time). */
export function siteTimeOf(site: Partial<Record<(typeof SITE_TIME_FIELDS)[number], string | null | undefined>>): SiteTime {
  return {
    time_zone: site.time_zone ?? SITE_TIME_DEFAULTS.time_zone,
    check_in_time: site.check_in_time ?? SITE_TIME_DEFAULTS.check_in_time,
    check_out_time: site.check_out_time ?? SITE_TIME_DEFAULTS.check_out_time,
  };
}

/** A date or date-time with `Z` or an offset: an instant, taken as it is. */
const ZONED = /(?:Z|[+-]\d{2}:?\d{2})$/i;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Whether a booking date as the gateway forwards it is a local one (a date, or a date-time without offset): the site's zone decides its instant. */
export const isLocalTime = (value: string): boolean => !ZONED.test(value);

/**
 * The instant of a local wall-clock time in a zone, by the zone's rules (Luxon's tz data). A time that
 * falls in a spring-forward gap does not exist: it moves forward to the first valid instant (the
 * change itself: 02:30 in New York on 10 March 2030 is 03:00 EDT). A time that occurs twice (fall
 * back) is the earlier of the two instants (01:30 in New York on 3 November 2030 is 01:30 EDT).
 */
export function localInstant(wall: string, zone: string): DateTime {
  const parts = DateTime.fromISO(wall, { zone: 'UTC' });
  if (!parts.isValid) throw new Error(`not a local date-time: ${wall}`);
  const fields = {
    year: parts.year,
    month: parts.month,
    day: parts.day,
    hour: parts.hour,
    minute: parts.minute,
    second: parts.second,
    millisecond: parts.millisecond,
  };
  const guess = DateTime.fromObject(fields, { zone });
  // The zone's offsets around that day: a change of offset on that night is between them.
  const offsets = [...new Set([guess.minus({ days: 1 }).offset, guess.offset, guess.plus({ days: 1 }).offset])];
  const candidates = offsets
    .map((o) => DateTime.fromObject(fields, { zone: FixedOffsetZone.instance(o) }).setZone(zone))
    .filter((c) => c.hour === fields.hour && c.minute === fields.minute && c.day === fields.day);
  if (candidates.length) return candidates.reduce((a, b) => (b.toMillis() < a.toMillis() ? b : a));
  // In a gap: the first instant with the offset after the change, searched between the wall time read
  // with the later offset and with the earlier one (the change lies between them).
  const [before, after] = [guess.minus({ days: 1 }).offset, guess.plus({ days: 1 }).offset];
  let lo = DateTime.fromObject(fields, { zone: FixedOffsetZone.instance(after) }).toMillis();
  let hi = DateTime.fromObject(fields, { zone: FixedOffsetZone.instance(before) }).toMillis();
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (DateTime.fromMillis(mid, { zone }).offset === after) hi = mid;
    else lo = mid;
  }
  return DateTime.fromMillis(hi, { zone });
}

/**
 * Whole local days in a zone (a schedule sent as dates alone): 00:00 of `day` (`start`), or 00:00
 * after it (`end`: the end of the day), as the zone's rules make them.
 */
export function localDayBound(day: string, bound: 'start' | 'end', zone: string): DateTime {
  const date = bound === 'start' ? day : DateTime.fromISO(day, { zone: 'UTC' }).plus({ days: 1 }).toISODate();
  return localInstant(`${date}T00:00`, zone);
}

/**
 * A booking's check-in or check-out as the gateway forwards it, resolved in its site's time
 * (docs/adr/0107-site-local-time.md): a date alone is the site's check-in (or check-out) hour of
 * that day in its zone, a date-time without offset is the site's local time, one with `Z` or an
 * offset is that instant. Returns the instant as ISO 8601 UTC.
 */
export function resolveStayTime(value: string, end: 'check_in' | 'check_out', site: SiteTime): string {
  if (!isLocalTime(value)) return new Date(value).toISOString();
  const wall = DATE_ONLY.test(value) ? `${value}T${end === 'check_in' ? site.check_in_time : site.check_out_time}` : value;
  return localInstant(wall, site.time_zone).toUTC().toISO() as string;
}

/**
 * An instant as a guest or a member of staff reads it at the site: "9 Mar 2030, 15:00 EST". The
 * abbreviation is the runtime's (ICU): its US names, else its British ones (CET, BST), else the
 * offset (GMT+9), which is never ambiguous.
 */
export function formatSiteTime(iso: string, zone: string): string {
  const at = DateTime.fromISO(iso, { zone: 'UTC' }).setZone(zone);
  const named = ['en-US', 'en-GB'].map((l) => at.setLocale(l).toFormat('ZZZZ')).find((n) => !/^GMT[+-]/.test(n)) ?? at.setLocale('en-US').toFormat('ZZZZ');
  return `${at.setLocale('en-GB').toFormat('d LLL yyyy, HH:mm')} ${named}`;
}
