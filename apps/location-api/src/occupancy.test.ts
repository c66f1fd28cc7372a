import amqp, { ChannelModel } from 'amqplib';
import { randomUUID } from 'node:crypto';
import { AccessEventMessage, BookingEventMessage, CredentialRecord, EventType, Exchanges } from '@smartlock/contracts';
import { bookingEventMessage, waitFor } from '@smartlock/testing';
import { occupancyModels } from './occupancy/store';
import { LocationApiHarness, property, startLocationApi } from './test-support/harness';

describe('location-api: deleting an occupied room or bed (access.events and booking.events)', () => {
  let h: LocationApiHarness;
  let A: Awaited<ReturnType<LocationApiHarness['company']>>;
  let conn: ChannelModel;
  let publish: (m: AccessEventMessage) => void;
  let publishBooking: (m: BookingEventMessage) => void;
  type Row = { _id: string; name: string; site_id: string; floor_id: string; room_id?: string };
  let rooms: Row[];
  let beds: Row[];

  beforeAll(async () => {
    h = await startLocationApi();
    A = await h.company('A');
    expect((await h.admin.put(`${A.base}/layout`, property({ floors: 2, rooms: 3, beds: 2 }))).status).toBe(200);
    rooms = (await A.api.get('/api/v4/location/rooms')).data.data.rooms;
    beds = (await A.api.get('/api/v4/location/beds')).data.data.beds;
    conn = await amqp.connect(h.vhost.url);
    const ch = await conn.createConfirmChannel();
    publish = (m) => ch.publish(Exchanges.accessEvents, m.type, Buffer.from(JSON.stringify(m)), { contentType: 'application/json' });
    publishBooking = (m) =>
      ch.publish(Exchanges.bookingEvents, `booking.${m.event_type.toLowerCase()}`, Buffer.from(JSON.stringify(m)), { contentType: 'application/json' });
  });
  afterAll(async () => {
    await conn?.close();
    await h?.stop();
  });

  const future = new Date(Date.now() + 7 * 86400_000).toISOString();
  const credential = (room: Row, bed: Row | null, over: Partial<CredentialRecord> = {}): CredentialRecord => ({
    type: 'EKEY',
    lockId: `L-${bed?._id ?? room._id}`,
    lockMac: 'AA:BB',
    lockLocationType: bed ? 'cabinet' : 'door',
    siteName: 'Site 1',
    siteId: room.site_id,
    roomNumber: room.name,
    roomName: room.name,
    roomId: room._id,
    bedNumber: bed?.name ?? null,
    bedId: bed?._id ?? null,
    keyId: 1,
    validFrom: new Date().toISOString(),
    validTo: future,
    ...over,
  });
  const message = (
    type: AccessEventMessage['type'],
    ref: string,
    sequence: number,
    credentials: CredentialRecord[],
    over: Partial<AccessEventMessage> = {},
  ): AccessEventMessage => ({
    type,
    company_id: A.id,
    reference_id: ref,
    event_id: randomUUID(),
    occurred_at: new Date().toISOString(),
    sequence,
    credentials,
    correlation_id: randomUUID(),
    ...over,
  });
  const stored = (ref: string, n: number) =>
    waitFor(async () => (await occupancyModels(h.db()).Occupancy.countDocuments({ reference_id: ref })) === n, { what: `${n} occupancy entries of ${ref}` });
  const del = (level: string, id: string, force = false) => h.admin.delete(`${A.base}/${level}/${id}${force ? '?force=true' : ''}`);

  it('a room with a guest: 409 naming the booking; after the checkout revokes (and a late redelivery of the provision), it is free of guests', async () => {
    const room = rooms[0];
    publish(message('access.provisioned', 'BOOK-1', 1, [credential(room, null)]));
    await stored('BOOK-1', 1);
    const refused = await del('rooms', room._id);
    expect(refused.status).toBe(409);
    expect(refused.data).toMatchObject({ error: true, code: 4090, data: { _id: room._id, active_bookings: ['BOOK-1'] } });
    expect(refused.data.message).toBe(`The room "${room.name}" has 1 active booking(s) (BOOK-1); cancel or move them first, or send ?force=true`);
    // A site or floor above it is refused for the same reason, before its children are even counted.
    expect((await del('sites', room.site_id)).data.data.active_bookings).toEqual(['BOOK-1']);
    expect((await del('floors', room.floor_id)).data.data.active_bookings).toEqual(['BOOK-1']);

    publish(message('access.revoked', 'BOOK-1', 3, [credential(room, null)]));
    await stored('BOOK-1', 2);
    // A late redelivery of the provision (lower sequence) brings nobody back.
    publish(message('access.provisioned', 'BOOK-1', 1, [credential(room, null)], { event_id: 'late-redelivery' }));
    await stored('BOOK-1', 3);
    const again = await del('rooms', room._id);
    // Its beds are still there: the ordinary children rule answers now.
    expect(again.status).toBe(409);
    expect(again.data.data.active_bookings).toBeUndefined();
    expect(again.data.message).toMatch(/location\(s\)/);
  });

  it("a bed: only that bed's guest counts; another bed of the room is free to delete", async () => {
    const [b1, b2] = beds.filter((b) => b.room_id === rooms[1]._id);
    publish(message('access.provisioned', 'BOOK-2', 1, [credential(rooms[1], null), credential(rooms[1], b1)]));
    await stored('BOOK-2', 1);
    expect((await del('beds', b1._id)).data).toMatchObject({ code: 4090, data: { active_bookings: ['BOOK-2'] } });
    expect((await del('beds', b2._id)).status).toBe(200);
    // force deletes an occupied bed all the same.
    expect((await del('beds', b1._id, true)).status).toBe(200);
  });

  it('a date change that re-issues within one event keeps the room occupied; expired credentials and employees do not count', async () => {
    const room = rooms[2];
    publish(message('access.revoked', 'BOOK-3', 2, [credential(room, null)]));
    publish(message('access.provisioned', 'BOOK-3', 2, [credential(room, null)]));
    publish(
      message('access.provisioned', 'BOOK-OLD', 1, [credential(room, null, { lockId: 'L-other', validTo: new Date(Date.now() - 60_000).toISOString() })]),
    );
    publish(message('access.provisioned', 'EMP-1', 1, [credential(room, null)], { subject: 'employee' }));
    await stored('BOOK-3', 2);
    await stored('BOOK-OLD', 1);
    const refused = await del('rooms', room._id);
    expect(refused.data.data.active_bookings).toEqual(['BOOK-3']);
  });

  it("another company's guests are not this company's", async () => {
    const B = await h.company('B');
    expect((await h.admin.put(`${B.base}/layout`, property({ rooms: 1 }))).status).toBe(200);
    const [roomB] = (await B.api.get('/api/v4/location/rooms')).data.data.rooms;
    publish(message('access.provisioned', 'BOOK-4', 1, [credential(roomB, null)])); // tagged with company A
    await stored('BOOK-4', 1);
    expect((await h.admin.delete(`${B.base}/rooms/${roomB._id}`)).status).toBe(200);
  });

  it('an import with prune that would remove an occupied room or bed: 409 naming the bookings, nothing removed; ?force=true removes them', async () => {
    const C = await h.company('C');
    expect((await h.admin.put(`${C.base}/layout`, property({ rooms: 3, beds: 2 }))).status).toBe(200);
    const roomsC: Row[] = (await C.api.get('/api/v4/location/rooms')).data.data.rooms;
    const bedsC: Row[] = (await C.api.get('/api/v4/location/beds')).data.data.beds;
    const [r1, r2] = roomsC;
    const bedOfR2 = bedsC.find((b) => b.room_id === r2._id) as Row;
    publish(message('access.provisioned', 'BOOK-P1', 1, [credential(r1, null)], { company_id: C.id }));
    publish(message('access.provisioned', 'BOOK-P2', 1, [credential(r2, bedOfR2)], { company_id: C.id }));
    await stored('BOOK-P1', 1);
    await stored('BOOK-P2', 1);

    // property({ rooms: 3, beds: 2 }) as a document of the rooms given
    const layout = (rooms: { name: string; beds: { name: string }[] }[]) => ({
      sites: [{ name: 'Site 1', buildings: [{ name: 'Building 1', floors: [{ name: 'Floor 1', rooms }] }] }],
    });
    const bedsOf = (...names: string[]) => names.map((name) => ({ name }));
    const r3 = { name: roomsC[2].name, beds: bedsOf('Bed 1', 'Bed 2') };

    // The document keeps only the third room (r1 and r2 with its beds would go) …
    const doc = layout([r3]);
    const refused = await h.admin.put(`${C.base}/layout?prune=true`, doc);
    expect(refused.status).toBe(409);
    expect(refused.data).toMatchObject({ error: true, code: 4090, data: { active_bookings: ['BOOK-P1', 'BOOK-P2'] } });
    expect(refused.data.message).toBe(
      'The import would remove places with 2 active booking(s) (BOOK-P1, BOOK-P2); cancel or move them first, list the places in the document, or send ?force=true',
    );
    expect((await C.api.get('/api/v4/location/rooms')).data.data.total).toBe(3);

    // … or only the occupied bed of r2: refused for that bed's guest, while removing the other bed is fine.
    const otherBed = bedsC.find((b) => b.room_id === r2._id && b._id !== bedOfR2._id) as Row;
    const r1Doc = { name: r1.name, beds: bedsOf('Bed 1', 'Bed 2') };
    expect(
      (await h.admin.put(`${C.base}/layout?prune=true`, layout([r1Doc, { name: r2.name, beds: bedsOf(otherBed.name) }, r3]))).data.data.active_bookings,
    ).toEqual(['BOOK-P2']);
    expect((await h.admin.put(`${C.base}/layout?prune=true`, layout([r1Doc, { name: r2.name, beds: bedsOf(bedOfR2.name) }, r3]))).status).toBe(200);

    const forced = await h.admin.put(`${C.base}/layout?prune=true&force=true`, doc);
    expect(forced.status).toBe(200);
    expect((await C.api.get('/api/v4/location/rooms')).data.data.rooms.map((r: Row) => r._id)).toEqual([roomsC[2]._id]);
  });

  // booking.events: what the booking system booked, whatever the worker made of it.
  const bookingMessage = (ref: string, sequence: number, eventType: EventType, booking: Partial<BookingEventMessage['booking']> = {}) =>
    bookingEventMessage({ companyId: A.id, siteId: rooms[0].site_id, ref, sequence, eventType, booking });
  const booked = (ref: string, n: number) =>
    waitFor(async () => (await occupancyModels(h.db()).BookingPlace.countDocuments({ reference_id: ref })) === n, {
      what: `${n} booked-place entries of ${ref}`,
    });
  const stay = { check_in: new Date().toISOString(), check_out: future };

  it('a booking not provisioned (yet, or failed) holds its bed and room; its cancel frees them, and a later update does not bring it back', async () => {
    const room = rooms[3];
    const [bed1, bed2] = beds.filter((b) => b.room_id === room._id);
    const created = bookingMessage('BOOK-B1', 1, 'BOOKING_CREATE', { room: room.name, bed: bed1.name, ...stay });
    publishBooking(created);
    publishBooking(created); // a redelivery: the same entry, not a second one
    await booked('BOOK-B1', 1);
    expect((await del('beds', bed1._id)).data).toMatchObject({ code: 4090, data: { _id: bed1._id, active_bookings: ['BOOK-B1'] } });
    expect((await del('rooms', room._id)).data.data.active_bookings).toEqual(['BOOK-B1']);
    expect((await del('beds', bed2._id)).status).toBe(200);

    // A move to a room that does not exist fails at the worker ('Room not found'): the guest stays put.
    publishBooking(bookingMessage('BOOK-B1', 2, 'BOOKING_ROOMMOVE', { room: 'no such room' }));
    await booked('BOOK-B1', 2);
    expect((await del('beds', bed1._id)).data.data.active_bookings).toEqual(['BOOK-B1']);

    publishBooking(bookingMessage('BOOK-B1', 3, 'BOOKING_CANCEL'));
    publishBooking(bookingMessage('BOOK-B1', 4, 'BOOKING_UPDATE', { room: room.name, bed: bed1.name, ...stay })); // the worker refuses it: cancelled
    await booked('BOOK-B1', 4);
    expect((await del('beds', bed1._id)).status).toBe(200);
    // One entry per event: the redelivered create, long since handled, added none.
    expect(await occupancyModels(h.db()).BookingPlace.countDocuments({ reference_id: 'BOOK-B1' })).toBe(4);
  });

  it('a room move frees the old bed and holds the new room (its external id before its name); a stay already over holds nothing', async () => {
    const [from, to] = [rooms[4], rooms[5]];
    const [bedX, bedY] = beds.filter((b) => b.room_id === from._id);
    expect((await A.api.patch(`/api/v4/location/rooms/${to._id}`, { external_id: 'PMS-ROOM-TO' })).status).toBe(200);
    publishBooking(bookingMessage('BOOK-M', 1, 'BOOKING_CREATE', { room: from.name, bed: bedX.name, ...stay }));
    await booked('BOOK-M', 1);
    expect((await del('beds', bedX._id)).data.data.active_bookings).toEqual(['BOOK-M']);

    publishBooking(bookingMessage('BOOK-M', 2, 'BOOKING_ROOMMOVE', { room_id: 'PMS-ROOM-TO', room: 'a name that is no room' }));
    await booked('BOOK-M', 2);
    expect((await del('rooms', to._id)).data.data.active_bookings).toEqual(['BOOK-M']);
    expect((await del('beds', bedX._id)).status).toBe(200);

    const past = { check_in: new Date(Date.now() - 3 * 86400_000).toISOString(), check_out: new Date(Date.now() - 86400_000).toISOString() };
    publishBooking(bookingMessage('BOOK-PAST', 1, 'BOOKING_CREATE', { room: from.name, bed: bedY.name, ...past }));
    await booked('BOOK-PAST', 1);
    expect((await del('beds', bedY._id)).status).toBe(200);
  });

  it('an import with prune that would remove a room booked but not provisioned: 409 naming the booking, nothing removed', async () => {
    const D = await h.company('D');
    expect((await h.admin.put(`${D.base}/layout`, property({ rooms: 2, beds: 0 }))).status).toBe(200);
    const [kept, booked1]: Row[] = (await D.api.get('/api/v4/location/rooms')).data.data.rooms;
    publishBooking(
      bookingEventMessage({
        companyId: D.id,
        siteId: booked1.site_id,
        ref: 'BOOK-PB',
        sequence: 1,
        eventType: 'BOOKING_CREATE',
        booking: { room: booked1.name, ...stay },
      }),
    );
    await booked('BOOK-PB', 1);
    const doc = { sites: [{ name: 'Site 1', buildings: [{ name: 'Building 1', floors: [{ name: 'Floor 1', rooms: [{ name: kept.name }] }] }] }] };
    const refused = await h.admin.put(`${D.base}/layout?prune=true`, doc);
    expect(refused.status).toBe(409);
    expect(refused.data).toMatchObject({ error: true, code: 4090, data: { active_bookings: ['BOOK-PB'] } });
    expect((await D.api.get('/api/v4/location/rooms')).data.data.total).toBe(2);
  });

  it('an occupancy re-sync whose sources do not answer: 503 in the envelope naming the source, to be sent again', async () => {
    const res = await h.admin.post(`${A.base}/occupancy/resync`);
    expect(res.status).toBe(503);
    expect(res.data).toMatchObject({ code: 5030, error: true, data: null });
    expect(res.data.message).toMatch(
      /^Occupancy re-sync incomplete: ingest-gateway did not replay: .*ECONNREFUSED.*; nothing is lost, send the request again$/,
    );
  });
});
