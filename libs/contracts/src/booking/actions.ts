export const EVENT_TYPES = [
  'BOOKING_CREATE',
  'BOOKING_CANCEL',
  'BOOKING_CHECKIN',
  'BOOKING_CHECKOUT',
  'BOOKING_ROOMMOVE',
  'BOOKING_DATECHANGE',
  'BOOKING_UPDATE',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** SPEC "Action mapping": keys are normalised action strings. */
const ACTION_TABLE: Record<string, EventType> = {
  create: 'BOOKING_CREATE',
  new: 'BOOKING_CREATE',
  reservation: 'BOOKING_CREATE',
  cancel: 'BOOKING_CANCEL',
  checkin: 'BOOKING_CHECKIN',
  checkout: 'BOOKING_CHECKOUT',
  roommove: 'BOOKING_ROOMMOVE',
  roomchange: 'BOOKING_ROOMMOVE',
  datechange: 'BOOKING_DATECHANGE',
  extend: 'BOOKING_DATECHANGE',
};

/** The action strings with their own event type (any other is BOOKING_UPDATE). */
export const ACTION_MAPPING: Readonly<Record<string, EventType>> = ACTION_TABLE;

/** Casing and the separators `_` and `-` are ignored: `Check-In`, `check_in` and `CHECKIN` are one action. */
export function normaliseAction(action: string): string {
  return action.toLowerCase().replace(/[_-]/g, '');
}

export function eventTypeForAction(action: string): EventType {
  const key = normaliseAction(action);
  // Own keys only: `constructor` is a key of every object (it crashed the publish of such an event).
  return Object.hasOwn(ACTION_TABLE, key) ? ACTION_TABLE[key] : 'BOOKING_UPDATE';
}

/** SPEC: room is required for create, update, checkin and checkout (optional for cancel). */
export const ROOM_REQUIRED_FOR: ReadonlySet<EventType> = new Set<EventType>(['BOOKING_CREATE', 'BOOKING_UPDATE', 'BOOKING_CHECKIN', 'BOOKING_CHECKOUT']);

export const ACCESS_TYPES = ['EKEY', 'PASSCODE', 'CARD', 'REMOTE'] as const;
export type AccessType = (typeof ACCESS_TYPES)[number];
export const DEFAULT_ACCESS_TYPE: AccessType = 'EKEY';
