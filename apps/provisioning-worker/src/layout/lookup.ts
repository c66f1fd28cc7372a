import type { SiteTime } from '@smartlock/contracts';

/**
 * What the worker asks of its layout replica. Ids are the replica's (location-api's) ids; the
 * customer's own ids are `externalId`. Room locks are `door`, bed locks `cabinet`.
 */
export interface SiteRef {
  id: string;
  name: string;
  /** The site's IANA zone and the local hours a date-only stay starts and ends at (libs/contracts site-time.ts). */
  time: SiteTime;
}

export interface PlaceRef {
  id: string;
  name: string;
}

export interface LockRef {
  lockId: string;
  lockLocationType: 'door' | 'cabinet';
}

/** A room or bed found by the booking's reference, with the locks bound to it (read with it: no second look-up). */
export interface BoundPlaceRef extends PlaceRef {
  locks: LockRef[];
}

export interface LayoutLookup {
  site(companyId: string, siteId: string): Promise<SiteRef | null>;
  /** By the customer's external id first, else by name within the site (SPEC: names are the key). */
  room(companyId: string, siteId: string, by: { externalId?: string; name?: string }): Promise<BoundPlaceRef | null>;
  /** By the customer's external id first, else by name within the room. */
  bed(companyId: string, roomId: string, by: { externalId?: string; name?: string }): Promise<BoundPlaceRef | null>;
  /** A room or a bed by its own id (employee schedules carry resolved ids). */
  roomById(companyId: string, roomId: string): Promise<(PlaceRef & { siteId: string }) | null>;
  bedById(companyId: string, bedId: string): Promise<(PlaceRef & { roomId: string }) | null>;
  locks(companyId: string, target: { roomId: string } | { bedId: string }): Promise<LockRef[]>;
  /** Brings the company's layout up to date with location-api now (a snapshot), before a "not found" is final. */
  refresh(companyId: string): Promise<void>;
}
