import { LockCloudError } from './errors';
import type { TimeInput, Validity } from './types';

export const HOUR_MS = 3_600_000;

/** Date or ISO 8601 string → epoch ms (UTC). A bad value is the caller's bug: permanent. */
function toEpochMs(value: TimeInput, field: string, operation: string): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) {
    throw new LockCloudError(`${field} is not a valid date or ISO 8601 string`, { kind: 'permanent', category: 'invalid_input', operation });
  }
  return ms;
}

/** Validity → [start, end] in epoch ms, refusing an empty or inverted period. */
export function validityMs(validity: Validity, operation: string): { start: number; end: number } {
  const start = toEpochMs(validity?.start, 'validity.start', operation);
  const end = toEpochMs(validity?.end, 'validity.end', operation);
  if (end <= start) {
    throw new LockCloudError('validity.end must be after validity.start', { kind: 'permanent', category: 'invalid_input', operation });
  }
  return { start, end };
}

/**
 * Passcode periods are whole hours on the vendor's side. The period is widened (start down, end up)
 * rather than narrowed, so a guest is never locked out of a booked minute; the applied period is
 * returned to the caller. Hours are UTC hours: the same as the lock's local hours except in
 * time zones offset by a fraction of an hour.
 */
export function widenToHours(period: { start: number; end: number }): { start: number; end: number } {
  return widenTo(period, HOUR_MS);
}

/** The same, to a vendor's own unit (Nuki: minutes). */
export function widenTo(period: { start: number; end: number }, unitMs: number): { start: number; end: number } {
  return { start: Math.floor(period.start / unitMs) * unitMs, end: Math.ceil(period.end / unitMs) * unitMs };
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The vendor's 0 means "no end" (permanent): ''. */
export function isoOrEmpty(ms: unknown): string {
  const n = Number(ms);
  return Number.isFinite(n) && n > 0 ? new Date(n).toISOString() : '';
}
