import fc from 'fast-check';
import { isReferenceId } from '@smartlock/contracts';
import { Errors, SpecErrors, normalisePhone, parseIsoDate, validateBookingEvent } from './validate';

const valid = {
  reference_id: 'BK-1',
  action: 'create',
  room: '101',
  check_in: '2026-12-01T15:00:00Z',
  check_out: '2026-12-05T11:00:00Z',
};
const errorsOf = (body: unknown) => {
  const v = validateBookingEvent(body);
  return v.ok ? [] : v.errors;
};

describe('booking event validation (SPEC "Ingest" and "Errors")', () => {
  it('accepts a valid body and normalises it', () => {
    const v = validateBookingEvent({ ...valid, action: 'Check-In', guest: { email: 'Ada@Example.com', phone: '+31 6 1234 5678' } });
    expect(v).toEqual({
      ok: true,
      value: {
        reference_id: 'BK-1',
        action: 'Check-In',
        action_key: 'checkin',
        event_type: 'BOOKING_CHECKIN',
        booking: { room: '101', check_in: '2026-12-01T15:00:00.000Z', check_out: '2026-12-05T11:00:00.000Z', access_types: ['EKEY'] },
        guest: { email: 'ada@example.com', phone: '+31612345678' },
      },
    });
  });

  it('refuses a reference_id that credential retrieval would refuse: a space, a control or non-ASCII character, more than 128', () => {
    for (const reference_id of ['A 123', 'A\t1', 'Zoë-1', 'x'.repeat(129)]) {
      expect({ reference_id, errors: errorsOf({ ...valid, reference_id }) }).toEqual({ reference_id, errors: [Errors.badReference] });
    }
    expect(errorsOf({ ...valid, reference_id: ' BK-7 ' })).toEqual([]); // trimmed, then valid
  });

  it('accepts exactly the reference ids that retrieval accepts (one rule)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 140, unit: 'binary-ascii' }), (reference_id) => {
        const v = validateBookingEvent({ ...valid, reference_id });
        const trimmed = reference_id.trim();
        if (v.ok) expect(isReferenceId(v.value.reference_id)).toBe(true);
        else if (trimmed !== '' && !isReferenceId(trimmed)) expect(v.errors).toContain(Errors.badReference);
      }),
    );
  });

  it('collects every problem of an empty body, with the SPEC strings', () => {
    expect(errorsOf({})).toEqual([SpecErrors.referenceRequired, Errors.actionRequired, SpecErrors.checkInRequired, Errors.checkOutRequired]);
  });

  it.each(['create', 'update', 'checkin', 'checkout', 'new', 'modify'])('room is required for %s', (action) => {
    expect(errorsOf({ ...valid, action, room: undefined })).toEqual([SpecErrors.roomRequired]);
  });

  it.each(['roommove', 'datechange', 'cancel'])('room is not required for %s', (action) => {
    expect(errorsOf({ ...valid, action, room: undefined })).toEqual([]);
  });

  it('cancel needs neither room nor dates', () => {
    expect(errorsOf({ reference_id: 'BK-1', action: 'cancel' })).toEqual([]);
  });

  it('the planned room_id satisfies the room requirement', () => {
    expect(errorsOf({ ...valid, room: undefined, room_id: 'R-EXT-1' })).toEqual([]);
  });

  it('aliases: room_number, bed_number, start_date, end_date', () => {
    const v = validateBookingEvent({
      reference_id: 'BK-1',
      action: 'create',
      room_number: '12',
      bed_number: 'A',
      start_date: '2026-12-01',
      end_date: '2026-12-02',
    });
    expect(v.ok && v.value.booking).toEqual({
      room: '12',
      bed: 'A',
      check_in: '2026-12-01',
      check_out: '2026-12-02',
      access_types: ['EKEY'],
    });
  });

  it('aliases with different values are refused; equal values are fine', () => {
    expect(errorsOf({ ...valid, room_number: '102' })).toEqual([Errors.aliasConflict('room', 'room_number')]);
    expect(errorsOf({ ...valid, room_number: '101' })).toEqual([]);
  });

  it('check_out before (or equal to) check_in', () => {
    expect(errorsOf({ ...valid, check_out: '2026-11-30T10:00:00Z' })).toEqual([Errors.checkOutBeforeCheckIn]);
    expect(errorsOf({ ...valid, check_out: valid.check_in })).toEqual([Errors.checkOutBeforeCheckIn]);
  });

  it.each(['tomorrow', '2026-02-30', '2026-12-01T25:00:00Z', '01/12/2026', '2026-12-01T10:00:00+25:00'])('unparsable date %p', (d) => {
    expect(errorsOf({ ...valid, check_in: d })).toEqual([Errors.badDate('check_in')]);
    expect(errorsOf({ ...valid, check_in: undefined, start_date: d })).toEqual([Errors.badDate('start_date')]);
  });

  it("dates with offsets become UTC; a date alone or a time without an offset stays the site's local time", () => {
    expect(parseIsoDate('2026-12-01T15:00:00+02:00')).toBe('2026-12-01T13:00:00.000Z');
    expect(parseIsoDate('2026-12-01T15:00')).toBe('2026-12-01T15:00:00.000');
    expect(parseIsoDate('2026-12-01')).toBe('2026-12-01');
    expect(parseIsoDate('2026-12-01T15:00:00.123Z')).toBe('2026-12-01T15:00:00.123Z');
  });

  it('leaves to the worker what only the site time can order', () => {
    expect(errorsOf({ ...valid, check_in: '2026-12-01', check_out: '2026-12-01' })).toEqual([Errors.checkOutBeforeCheckIn]);
    expect(errorsOf({ ...valid, check_in: '2026-12-02', check_out: '2026-12-01' })).toEqual([Errors.checkOutBeforeCheckIn]);
    expect(errorsOf({ ...valid, check_in: '2026-12-01T15:00', check_out: '2026-12-01T11:00' })).toEqual([Errors.checkOutBeforeCheckIn]);
    expect(errorsOf({ ...valid, check_in: '2026-12-01', check_out: '2026-12-01T11:00:00Z' })).toEqual([]);
  });

  it.each(['0612345678', '+0612345678', '+31-abc', '+1234', '31612345678'])('bad phone %p', (phone) => {
    expect(errorsOf({ ...valid, guest: { phone } })).toEqual([Errors.badPhone]);
  });

  it('phone formatting characters are dropped', () => {
    expect(normalisePhone('+1 (415) 555-0100')).toBe('+14155550100');
  });

  it.each(['ada', 'ada@', '@example.com', 'ada@example', 'a da@example.com'])('bad e-mail %p', (email) => {
    expect(errorsOf({ ...valid, guest: { email } })).toEqual([Errors.badEmail]);
  });

  it('operator objects and arrays where strings belong', () => {
    expect(
      errorsOf({
        reference_id: { $gt: '' },
        action: ['create'],
        room: { $ne: null },
        check_in: 20261201,
        check_out: true,
        card_id: { $exists: true },
        guest: { name: ['x'], email: { $regex: '.*' }, phone: 31612345678 },
      }),
    ).toEqual([
      Errors.notString('reference_id'),
      Errors.notString('action'),
      Errors.notString('room'),
      Errors.notString('check_in'),
      Errors.notString('check_out'),
      Errors.notString('guest.name'),
      Errors.notString('guest.email'),
      Errors.notString('guest.phone'),
      Errors.notString('card_id'),
    ]);
  });

  it('a body that is not an object', () => {
    for (const body of [[], 'text', 42, null]) expect(errorsOf(body)).toEqual([Errors.bodyNotObject]);
  });

  it('guest must be an object', () => {
    expect(errorsOf({ ...valid, guest: 'Ada' })).toEqual([Errors.guestNotObject]);
  });

  it('access_type: string or array, defaulted, checked, CARD needs card_id', () => {
    const ok = validateBookingEvent({ ...valid, access_type: ['passcode', 'CARD', 'CARD'], card_id: 'C-1' });
    expect(ok.ok && ok.value.booking).toMatchObject({ access_types: ['PASSCODE', 'CARD'], card_id: 'C-1' });
    expect(errorsOf({ ...valid, access_type: 'CARD' })).toEqual([Errors.cardIdRequired]);
    expect(errorsOf({ ...valid, access_type: ['EKEY', 'CARD'] })).toEqual([Errors.cardIdRequired]);
    expect(errorsOf({ ...valid, access_type: 'BLUETOOTH' })).toEqual([Errors.badAccessType('"BLUETOOTH"')]);
    expect(errorsOf({ ...valid, access_type: [] })).toEqual([Errors.accessTypeEmpty]);
    expect(errorsOf({ ...valid, access_type: [{ $gt: '' }] })).toEqual([Errors.notString('access_type[]')]);
    const remote = validateBookingEvent({ ...valid, access_type: 'REMOTE' });
    expect(remote.ok && remote.value.booking.access_types).toEqual(['REMOTE']);
  });

  it('over-long values are refused', () => {
    expect(errorsOf({ ...valid, reference_id: 'x'.repeat(201) })).toEqual([Errors.tooLong('reference_id', 200)]);
  });

  it('unknown fields are ignored; null counts as absent', () => {
    const v = validateBookingEvent({ ...valid, loyalty_tier: 'gold', bed: null, guest: null });
    expect(v.ok && v.value).toMatchObject({ booking: { room: '101' }, guest: null });
    expect(v.ok && JSON.stringify(v.value)).not.toContain('gold');
  });
});
