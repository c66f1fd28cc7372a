/**
 * The `message` of an event that ends FAILED or DEAD_LETTER for a reason of the booking's own (the
 * provisioning worker's), as customers read it on `GET /webhook/events/:eventId` and in the
 * `reason` of access.failed. SPEC "Error conditions" gives the first two exactly.
 */
export const EventFailureMessages = {
  roomNotFound: 'Room not found',
  siteNotFound: 'Site not found',
  bedNotFound: 'Bed not found',
  bookingNotFound: (ref: string) => `Booking ${ref} not found`,
  /** A FAILED event retried after a later event of its booking was applied. */
  superseded: (ref: string) => `Superseded by a later event of booking ${ref}`,
} as const;
