/** Exchange names (README.md "The system"). The queues and their bindings are in libs/messaging topology. */
export const Exchanges = {
  bookingEvents: 'booking.events',
  eventStatus: 'event.status',
  accessEvents: 'access.events',
  locationEvents: 'location.events',
  identityEvents: 'identity.events',
  employeeSchedules: 'employee.schedules',
} as const;

export const AccessEventTypes = ['access.provisioned', 'access.revoked', 'access.failed'] as const;
export type AccessEventType = (typeof AccessEventTypes)[number];

/** Message headers shared by every producer and consumer. */
export const Headers = {
  correlationId: 'x-correlation-id',
  eventId: 'x-event-id',
  retryCount: 'retry_count',
} as const;
