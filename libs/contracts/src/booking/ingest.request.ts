import { ACCESS_TYPES } from './actions';
import { REFERENCE_ID_RULE } from './reference-id';

/** SPEC "Errors": the ingest's 400 strings the SPEC gives, exactly. */
export const IngestSpecErrors = {
  referenceRequired: 'reference_id is required',
  checkInRequired: 'check_in or start_date is required',
  roomRequired: 'room or room_number is required for this action',
} as const;

/** The ingest's other 400 strings: everything the SPEC leaves to us. */
export const IngestErrors = {
  bodyNotObject: 'Request body must be a JSON object',
  actionRequired: 'action is required',
  checkOutRequired: 'check_out or end_date is required',
  checkOutBeforeCheckIn: 'check_out must be after check_in',
  cardIdRequired: 'card_id is required when access_type includes CARD',
  accessTypeEmpty: 'access_type must not be empty',
  guestNotObject: 'guest must be an object',
  badEmail: 'guest.email must be a valid e-mail address',
  badPhone: 'guest.phone must be in the format +<country code><number>, e.g. +31612345678',
  notString: (field: string) => `${field} must be a string`,
  tooLong: (field: string, max: number) => `${field} must be at most ${max} characters`,
  badDate: (field: string) => `${field} must be an ISO 8601 date or date-time (e.g. 2026-12-01 or 2026-12-01T15:00:00Z)`,
  aliasConflict: (a: string, b: string) => `${a} and ${b} are aliases and must not differ`,
  badAccessType: (value: string) => `access_type ${value} is not one of ${ACCESS_TYPES.join(', ')}`,
  badReference: `reference_id must be ${REFERENCE_ID_RULE}`,
} as const;

/** Longest identifier accepted in a booking event (reference, room, bed, card, external ids). */
export const MAX_ID_LENGTH = 200;
/** Longest free text accepted in a booking event (the guest's name). */
export const MAX_TEXT_LENGTH = 500;
