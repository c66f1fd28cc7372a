import {
  ACCESS_TYPES,
  AccessType,
  DEFAULT_ACCESS_TYPE,
  EventType,
  IngestErrors,
  IngestSpecErrors,
  MAX_ID_LENGTH,
  MAX_TEXT_LENGTH,
  ROOM_REQUIRED_FOR,
  eventTypeForAction,
  isLocalTime,
  isReferenceId,
  normaliseAction,
} from '@smartlock/contracts';
import type { BookingFields, GuestFields } from '../events/event.schema';

/** SPEC "Errors": the strings the SPEC gives, exactly. */
export const SpecErrors = IngestSpecErrors;

/** Our strings for everything the SPEC leaves to us (libs/contracts, for docs/errors.md). */
export const Errors = IngestErrors;

export { MAX_ID_LENGTH };

export interface ValidBooking {
  reference_id: string;
  action: string;
  action_key: string;
  event_type: EventType;
  booking: BookingFields;
  guest: GuestFields | null;
}

export type Validation = { ok: true; value: ValidBooking } | { ok: false; errors: string[] };

// YYYY-MM-DD, optionally with THH:MM[:SS[.fff]] and Z or ±HH:MM. A date alone or a time without an
// offset is the site's local time: the worker resolves it in the site's zone (libs/contracts site-time.ts).
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
// local@domain.tld: no spaces, one @, a dot in the domain; what mail providers accept in practice.
const EMAIL = /^[^\s@"<>()[\]\\,;:]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
// E.164: + then 7 to 15 digits, no leading zero in the country code.
const E164 = /^\+[1-9]\d{6,14}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const absent = (v: unknown) => v === undefined || v === null;

/**
 * An ISO 8601 string to its canonical form, or undefined when it is not a real date: with `Z` or an
 * offset, the instant in UTC (`2026-12-01T13:00:00.000Z`); a date alone as it is (`2026-12-01`); a
 * date-time without offset as the local wall-clock time it names (`2026-12-01T15:00:00.000`).
 */
export function parseIsoDate(value: string): string | undefined {
  const m = ISO_DATE.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '0', zone] = m;
  const ms = Number(`0.${frac}`) * 1000;
  const base = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Math.floor(ms));
  const check = new Date(base);
  // Rejects 2026-02-30, 25:00 and the like instead of rolling them over.
  if (
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    check.getUTCHours() !== Number(h) ||
    check.getUTCMinutes() !== Number(mi) ||
    check.getUTCSeconds() !== Number(s)
  ) {
    return undefined;
  }
  if (!zone) return m[4] === undefined ? `${y}-${mo}-${d}` : check.toISOString().slice(0, -1);
  let offsetMin = 0;
  if (zone !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
    if (!z || Number(z[2]) > 23 || Number(z[3]) > 59) return undefined;
    offsetMin = (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3]));
  }
  return new Date(base - offsetMin * 60_000).toISOString();
}

/**
 * Whether check_out can be after check_in, as far as the gateway can tell without the site's time:
 * two instants, two local date-times or two dates are compared (a stay of dates ends on a later
 * day); a date against a date-time, or a local time against an instant, is left to the worker, which
 * compares the resolved instants.
 */
function stayCanEnd(checkIn: string, checkOut: string): boolean {
  const dateOnly = (v: string) => v.length === 10;
  if (isLocalTime(checkIn) !== isLocalTime(checkOut) || dateOnly(checkIn) !== dateOnly(checkOut)) return true;
  // Canonical local forms sort as they read; instants are compared as instants.
  return isLocalTime(checkIn) ? checkOut > checkIn : Date.parse(checkOut) > Date.parse(checkIn);
}

/** `+31 6 1234-5678` → `+31612345678`, or undefined when it is not `+<country code><number>`. */
export function normalisePhone(value: string): string | undefined {
  const compact = value.replace(/[\s().-]/g, '');
  return E164.test(compact) ? compact : undefined;
}

/**
 * Validates a booking event body (SPEC "Ingest") and collects every problem, so a customer fixes a
 * request in one round. Aliases resolve to one field (`room`/`room_number`, `bed`/`bed_number`,
 * `check_in`/`start_date`, `check_out`/`end_date`); sending both with different values is an error.
 * `null` counts as absent. Unknown fields are ignored (neither stored nor forwarded).
 */
export function validateBookingEvent(body: unknown): Validation {
  if (!isObject(body)) return { ok: false, errors: [Errors.bodyNotObject] };
  const errors: string[] = [];

  /** A string field (or undefined when absent); records the error when it is another type or too long. */
  const str = (field: string, max = MAX_ID_LENGTH, from: Record<string, unknown> = body, label = field): string | undefined => {
    const v = from[field];
    if (absent(v)) return undefined;
    if (typeof v !== 'string') {
      errors.push(Errors.notString(label));
      return undefined;
    }
    const t = v.trim();
    if (t.length > max) {
      errors.push(Errors.tooLong(label, max));
      return undefined;
    }
    return t === '' ? undefined : t;
  };
  /** Two aliases of one field: the value, or undefined; conflicting values are an error. */
  const alias = (a: string, b: string, max = MAX_ID_LENGTH): { value?: string; name?: string } => {
    const va = str(a, max);
    const vb = str(b, max);
    if (va !== undefined && vb !== undefined && va !== vb) errors.push(Errors.aliasConflict(a, b));
    if (va !== undefined) return { value: va, name: a };
    if (vb !== undefined) return { value: vb, name: b };
    return {};
  };

  const referenceId = str('reference_id');
  const referenceTyped = absent(body.reference_id) || typeof body.reference_id === 'string';
  if (referenceId === undefined && referenceTyped && !errors.some((e) => e.startsWith('reference_id'))) {
    errors.push(SpecErrors.referenceRequired);
  }
  // The rule credential retrieval applies too: what is accepted here can always be read back.
  if (referenceId !== undefined && !isReferenceId(referenceId)) errors.push(Errors.badReference);

  const action = str('action', 100);
  const actionTyped = absent(body.action) || typeof body.action === 'string';
  if (action === undefined && actionTyped && !errors.some((e) => e.startsWith('action'))) errors.push(Errors.actionRequired);
  const eventType = action !== undefined ? eventTypeForAction(action) : undefined;
  const isCancel = eventType === 'BOOKING_CANCEL';

  const room = alias('room', 'room_number');
  const bed = alias('bed', 'bed_number');
  const roomId = str('room_id');
  const bedId = str('bed_id');
  // room_id (the planned external id) is resolved before names, so it satisfies the room requirement.
  if (eventType && ROOM_REQUIRED_FOR.has(eventType) && room.value === undefined && roomId === undefined) {
    const roomTyped = ['room', 'room_number'].every((f) => absent(body[f]) || typeof body[f] === 'string');
    if (roomTyped) errors.push(SpecErrors.roomRequired);
  }

  const date = (a: string, b: string, required: boolean, missing: string): string | undefined => {
    const before = errors.length;
    const { value, name } = alias(a, b, 64);
    if (value === undefined) {
      if (required && errors.length === before) errors.push(missing);
      return undefined;
    }
    const iso = parseIsoDate(value);
    if (!iso) errors.push(Errors.badDate(name as string));
    return iso;
  };
  // Cancel needs neither date; an event whose action is missing is held to the general rule.
  const checkIn = date('check_in', 'start_date', !isCancel, SpecErrors.checkInRequired);
  const checkOut = date('check_out', 'end_date', !isCancel, Errors.checkOutRequired);
  if (checkIn && checkOut && !stayCanEnd(checkIn, checkOut)) errors.push(Errors.checkOutBeforeCheckIn);

  let guest: GuestFields | null = null;
  if (!absent(body.guest)) {
    if (!isObject(body.guest)) {
      errors.push(Errors.guestNotObject);
    } else {
      const g = body.guest;
      const name = str('name', MAX_TEXT_LENGTH, g, 'guest.name');
      const email = str('email', 254, g, 'guest.email');
      const phoneRaw = str('phone', 40, g, 'guest.phone');
      if (email !== undefined && !EMAIL.test(email)) errors.push(Errors.badEmail);
      const phone = phoneRaw !== undefined ? normalisePhone(phoneRaw) : undefined;
      if (phoneRaw !== undefined && phone === undefined) errors.push(Errors.badPhone);
      guest = {};
      if (name !== undefined) guest.name = name;
      if (email !== undefined) guest.email = email.toLowerCase();
      if (phone !== undefined) guest.phone = phone;
      if (Object.keys(guest).length === 0) guest = null;
    }
  }

  let accessTypes: AccessType[] = [DEFAULT_ACCESS_TYPE];
  const rawAccess = body.access_type;
  if (!absent(rawAccess)) {
    const list = Array.isArray(rawAccess) ? rawAccess : [rawAccess];
    if (list.length === 0) errors.push(Errors.accessTypeEmpty);
    const out: AccessType[] = [];
    for (const item of list) {
      if (typeof item !== 'string') {
        errors.push(Errors.notString(Array.isArray(rawAccess) ? 'access_type[]' : 'access_type'));
        continue;
      }
      const upper = item.trim().toUpperCase();
      if (!(ACCESS_TYPES as readonly string[]).includes(upper)) errors.push(Errors.badAccessType(JSON.stringify(item).slice(0, 40)));
      else if (!out.includes(upper as AccessType)) out.push(upper as AccessType);
    }
    if (out.length) accessTypes = out;
  }
  const cardId = str('card_id', MAX_ID_LENGTH);
  const wantsCard =
    (typeof rawAccess === 'string' && rawAccess.trim().toUpperCase() === 'CARD') ||
    (Array.isArray(rawAccess) && rawAccess.some((a) => typeof a === 'string' && a.trim().toUpperCase() === 'CARD'));
  if (wantsCard && cardId === undefined && (absent(body.card_id) || typeof body.card_id === 'string')) errors.push(Errors.cardIdRequired);

  if (errors.length) return { ok: false, errors };

  const booking: BookingFields = { access_types: accessTypes };
  if (room.value !== undefined) booking.room = room.value;
  if (bed.value !== undefined) booking.bed = bed.value;
  if (roomId !== undefined) booking.room_id = roomId;
  if (bedId !== undefined) booking.bed_id = bedId;
  if (checkIn !== undefined) booking.check_in = checkIn;
  if (checkOut !== undefined) booking.check_out = checkOut;
  if (cardId !== undefined) booking.card_id = cardId;
  return {
    ok: true,
    value: {
      reference_id: referenceId as string,
      action: action as string,
      action_key: normaliseAction(action as string),
      event_type: eventType as EventType,
      booking,
      guest,
    },
  };
}
