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
  /** An event sent for another site of the company (an ingest token's, or X-Site-Id) than the booking's: nothing is changed. */
  otherSite: 'The booking belongs to another site',
  /** A lock of the booking's place that is not the company's (a binding older than lock ownership): nothing is put on it. */
  lockNotOwned: (lockId: string) => `Lock ${lockId} is not one of the company's locks`,
  /** A FAILED event retried after a later event of its booking was applied. */
  superseded: (ref: string) => `Superseded by a later event of booking ${ref}`,
} as const;
