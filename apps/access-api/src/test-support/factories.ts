// Message factories for access-api's tests (no test framework imports here).
import { randomUUID } from 'node:crypto';
import { bookingEventMessage, credentialRecord } from '@smartlock/testing';
import type { AccessEventMessage, AccessEventType, BookingEventMessage, CredentialRecord } from '@smartlock/contracts';

/** The shared factory of libs/testing. */
export const credential = credentialRecord;

/** An e-key on a bed's cabinet lock. */
export function cabinetEkey(over: Partial<CredentialRecord> = {}): CredentialRecord {
  return credential('EKEY', {
    lockId: 'lock-cab-3',
    lockMac: 'AA:BB:CC:DD:EE:03',
    lockLocationType: 'cabinet',
    roomNumber: null, // as the worker sends it (SPEC's v2 record); roomName names the room
    roomName: '12',
    roomId: 'room-12',
    bedNumber: '3',
    bedId: 'bed-3',
    keyId: 7003,
    lockData: 'LOCKDATA-CABINET-3',
    ...over,
  });
}

export function accessEvent(companyId: string, referenceId: string, type: AccessEventType, over: Partial<AccessEventMessage> = {}): AccessEventMessage {
  return {
    type,
    company_id: companyId,
    reference_id: referenceId,
    event_id: randomUUID(),
    occurred_at: new Date().toISOString(),
    sequence: 1,
    credentials: [],
    validity: { check_in: '2026-12-01T14:00:00.000Z', check_out: '2026-12-04T10:00:00.000Z' },
    correlation_id: randomUUID(),
    ...over,
  };
}

export function bookingEvent(companyId: string, referenceId: string, over: Partial<BookingEventMessage> = {}): BookingEventMessage {
  return {
    ...bookingEventMessage({
      companyId,
      siteId: 'site-1',
      ref: referenceId,
      sequence: 1,
      eventType: 'BOOKING_CREATE',
      booking: { room: '101', check_in: '2026-12-01T14:00:00.000Z', check_out: '2026-12-04T10:00:00.000Z' },
    }),
    ...over,
  };
}

export function ref(prefix = 'BK'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}
