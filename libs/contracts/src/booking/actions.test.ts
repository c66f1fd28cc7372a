import { eventTypeForAction, normaliseAction, EventType } from '../index';

// SPEC "Action mapping for booking events", every row.
const TABLE: [string[], EventType][] = [
  [['create', 'new', 'reservation'], 'BOOKING_CREATE'],
  [['cancel'], 'BOOKING_CANCEL'],
  [['checkin', 'check_in', 'check-in'], 'BOOKING_CHECKIN'],
  [['checkout', 'check_out', 'check-out'], 'BOOKING_CHECKOUT'],
  [['roommove', 'room_move', 'roomchange'], 'BOOKING_ROOMMOVE'],
  [['datechange', 'date_change', 'extend'], 'BOOKING_DATECHANGE'],
];

const variants = (s: string) => [s, s.toUpperCase(), s[0].toUpperCase() + s.slice(1), s.replace(/_/g, '-'), s.replace(/-/g, '_')];

describe('action mapping', () => {
  for (const [actions, type] of TABLE) {
    for (const action of actions) {
      it.each(variants(action))(`%s maps to ${type}`, (v) => expect(eventTypeForAction(v)).toBe(type));
    }
  }

  it('treats CheckIn, check-in and CHECK_IN as one action', () => {
    expect(new Set(['CheckIn', 'check-in', 'CHECK_IN', 'checkin'].map(normaliseAction)).size).toBe(1);
  });

  it.each(['update', 'modify', 'Change-Guest', '', 'check in', 'constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    'unknown action %p maps to BOOKING_UPDATE',
    (a) => expect(eventTypeForAction(a)).toBe('BOOKING_UPDATE'),
  );
});
