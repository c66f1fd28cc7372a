import { IdentityEventMessage, IdentityEventType } from '@smartlock/contracts';
import { Broker, EXCHANGES } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';

export interface IdentityEvents {
  /**
   * Publishes one `identity.events` message after the database write it reports, and waits for the
   * broker's confirm. Returns null once the broker has it, else why not. A failure (broker down, no confirm, no queue
   * bound) never undoes the write nor fails the request: it is logged as a warning, and replicas
   * catch up through `POST /admin/v1/callback-endpoints/republish`; caches of keys need nothing, as
   * libs/auth reads the identity slice on every request.
   */
  publish(
    type: IdentityEventType,
    event: { company_id: string; id: string; data?: Record<string, unknown> },
    meta: { correlationId?: string; logger?: Logger },
  ): Promise<string | null>;
}

/** `signingKey` (IDENTITY_EVENTS_KEY) signs every message: the dispatcher refuses an unsigned callback change. */
export function identityEvents(broker: Broker, logger: Logger, signingKey: Buffer): IdentityEvents {
  return {
    async publish(type, event, meta) {
      const message: IdentityEventMessage = { type, company_id: event.company_id, id: event.id, at: new Date().toISOString(), data: event.data };
      try {
        await broker.publish(EXCHANGES.identityEvents.name, type, message, { correlationId: meta.correlationId, signWith: signingKey });
        return null;
      } catch (err) {
        (meta.logger ?? logger).warn('identity event not published; the change is stored (replicas re-sync with POST /admin/v1/callback-endpoints/republish)', {
          type,
          id: event.id,
          company_id: event.company_id,
          reason: (err as Error).message,
        });
        return (err as Error).message;
      }
    },
  };
}
