import { randomUUID } from 'node:crypto';
import type { BookingEventMessage, CredentialRecord, EventType } from '@smartlock/contracts';

/** A credential record as the provisioning worker publishes it: a door lock of room 101 by default. */
export function credentialRecord(type: CredentialRecord['type'], over: Partial<CredentialRecord> = {}): CredentialRecord {
  const base: CredentialRecord = {
    type,
    lockId: 'lock-101',
    lockMac: 'AA:BB:CC:DD:EE:01',
    lockLocationType: 'door',
    siteName: 'Harbour House',
    siteId: 'site-1',
    roomNumber: '101',
    roomName: '101',
    roomId: 'room-101',
    bedNumber: null,
    bedId: null,
    validFrom: '2026-12-01T14:00:00.000Z',
    validTo: '2026-12-04T10:00:00.000Z',
  };
  if (type === 'EKEY' || type === 'REMOTE') Object.assign(base, { keyId: 7001, lockData: 'LOCKDATA-DOOR-101' });
  if (type === 'PASSCODE') Object.assign(base, { passcode: '482913', passcodeId: 55 });
  if (type === 'CARD') Object.assign(base, { card_id: 'CARD-0042', cardId: 99 });
  return { ...base, ...over };
}

/** A booking.events message as the ingest gateway publishes it: an EKEY booking, `booking` merged over it. */
export function bookingEventMessage(o: {
  companyId: string;
  siteId: string;
  ref: string;
  sequence: number;
  eventType: EventType;
  booking?: Partial<BookingEventMessage['booking']>;
  guest?: BookingEventMessage['guest'];
  eventId?: string;
}): BookingEventMessage {
  return {
    event_id: o.eventId ?? randomUUID(),
    company_id: o.companyId,
    site_id: o.siteId,
    provider: 'direct',
    event_type: o.eventType,
    action: o.eventType.replace('BOOKING_', '').toLowerCase(),
    reference_id: o.ref,
    sequence: o.sequence,
    received_at: new Date().toISOString(),
    booking: { access_types: ['EKEY'], ...o.booking },
    ...(o.guest ? { guest: o.guest } : {}),
    correlation_id: randomUUID(),
  };
}
