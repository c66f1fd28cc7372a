import { ApiClient, BookingEvent, IngestClient, ok, sendBooking, waitForEvent, WaitOptions } from '@smartlock/client';

export interface Integration {
  /** {base_url}: locations and access, with the company's API key. */
  api: ApiClient;
  /** {webhook_url}: booking ingest and event tracking, with the same key. */
  ingest: IngestClient;
  /** The ingest token issued for the site (its URL is `{webhook_url}/webhook/t/<token>`). */
  token: string;
  log?: (line: string) => void;
}

/**
 * SPEC's integration loop, once: (1) map the locations, (2) create a booking in the first room,
 * (3) poll its event until it settles, (4) retrieve the credentials.
 */
export async function bookAndRetrieve(it: Integration, booking: Omit<BookingEvent, 'room_number' | 'action'>, wait: WaitOptions = {}) {
  const log = it.log ?? (() => undefined);

  // 1. Map locations: every Site -> Room (-> Bed) path, page by page. Bookings name rooms by name.
  const rows = [];
  for (let page = 1; ; page++) {
    const all = await ok(it.api.GET('/api/v4/location/all', { params: { query: { page, limit: 100 } } }));
    rows.push(...all.data.locations);
    if (!all.data.pagination.hasNext) break;
  }
  const room = rows[0]?.room.name;
  if (!room) throw new Error('the company has no rooms yet: import its layout first');
  log(`1. ${rows.length} location(s); booking room ${room} of site ${rows[0].site.name}`);

  // 2. Create the booking: 202 and an eventId; provisioning runs asynchronously.
  const accepted = await sendBooking(it.ingest, it.token, { ...booking, action: 'create', room_number: room });
  log(`2. accepted: event ${accepted.eventId} (${accepted.status})`);

  // 3. The outcome: `?wait=` answers as soon as the event settles (no polling loop).
  const event = await waitForEvent(it.ingest, accepted.eventId, wait);
  log(`3. event ${event.eventId}: ${event.status}${event.message ? ` (${event.message})` : ''}`);
  if (event.status !== 'COMPLETED') throw new Error(`the booking did not complete: ${event.status} ${event.message ?? ''}`);

  // 4. Retrieve the credentials: they exist once the event is COMPLETED.
  const access = await ok(it.api.GET('/api/v4/bookings/{referenceId}/access', { params: { path: { referenceId: booking.reference_id } } }));
  for (const c of access.data.credentials) log(`4. ${c.type} on lock ${c.lock.lockId}${c.passcode ? `: passcode ${c.passcode}` : ''}`);
  return { room, eventId: accepted.eventId, event, access: access.data };
}
