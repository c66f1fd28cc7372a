import Joi from 'joi';
import { siteTimeFields } from './site-time';

/** Levels of the layout, top to bottom (SPEC "Location hierarchy"). */
export const LOCATION_LEVELS = ['site', 'building', 'floor', 'room', 'bed'] as const;
export type LocationLevel = (typeof LOCATION_LEVELS)[number];

const LOCATION_EVENT_KINDS = [
  'node.created',
  'node.renamed',
  'node.deleted',
  'external_id.set',
  /** A site's time zone or check-in/check-out hours changed. */
  'site.time_set',
  'lock.bound',
  'lock.unbound',
  /** The events of some versions could not be published: every replica rebuilds from a snapshot. */
  'layout.resync',
  /**
   * One commit (versions commit_first..commit_last) in one message: the state of every node it
   * changed, and the ids it deleted; without `changes` (a commit too large to carry) replicas take
   * the snapshot. What location-api publishes; the per-node kinds above are what earlier versions
   * published, still applied by replicas (a rolling upgrade).
   */
  'layout.committed',
] as const;
export type LocationEventKind = (typeof LOCATION_EVENT_KINDS)[number];

/** A lock bound to a room (door) or a bed (cabinet). Vendor vocabulary: lockId, lockMac. */
export interface LockBinding {
  lock_id: string;
  lock_mac: string;
  name: string | null;
  provider: string | null;
  lockLocationType: 'door' | 'cabinet';
}

/**
 * A node as it is after the change (or before it, for `node.deleted`): its own fields, its ancestors'
 * ids, its path (ancestors root first, with names) and, on rooms and beds, every lock bound to it.
 * `version` is the company version of the node's last change; replicas keep the newest per node.
 */
export interface LocationNodeState {
  level: LocationLevel;
  _id: string;
  name: string;
  external_id: string | null;
  site_id?: string;
  building_id?: string;
  floor_id?: string;
  room_id?: string;
  locks?: LockBinding[];
  /** Sites only (site-time.ts): always present on a site's state. */
  time_zone?: string;
  check_in_time?: string;
  check_out_time?: string;
  version: number;
}

export interface LocationPathItem {
  level: LocationLevel;
  _id: string;
  name: string;
}

/** What a `layout.committed` message changed: nodes as they are after the commit, and deleted node ids. */
export interface LayoutChanges {
  nodes: LocationNodeState[];
  deleted: string[];
}

/**
 * `location.events` (topic), routing key `location.<kind>`. location-api publishes one
 * `layout.committed` per commit: it covers the company versions `commit_first`..`commit_last` (a
 * replica applies it on top of version commit_first - 1, so a gap says a commit was missed), and
 * `version` is commit_last. Earlier versions published one message per changed node (one per lock for
 * lock.bound / lock.unbound), `version` increasing by one per message; replicas still apply those.
 * `layout.resync` (at commit_last) tells every replica to take the snapshot (docs/adr/0108).
 */
export interface LocationEventMessage {
  company_id: string;
  kind: LocationEventKind;
  version: number;
  commit_first: number;
  commit_last: number;
  occurred_at: string;
  node?: LocationNodeState & { path: LocationPathItem[] };
  lock?: LockBinding;
  /** For node.renamed, external_id.set and site.time_set: the values before the change. */
  previous?: { name?: string; external_id?: string | null; time_zone?: string; check_in_time?: string; check_out_time?: string };
  /** layout.committed only; absent when the commit was too large to carry (take the snapshot). */
  changes?: LayoutChanges;
  correlation_id: string;
}

export function locationRoutingKey(kind: LocationEventKind): string {
  return `location.${kind}`;
}

/** `GET /admin/v1/companies/:companyId/snapshot`: the whole layout at one company version. */
export interface LayoutSnapshot {
  company_id: string;
  version: number;
  nodes: LocationNodeState[];
}

const id = Joi.string().hex().length(24);

const lockBindingSchema = Joi.object<LockBinding>({
  lock_id: Joi.string().required(),
  lock_mac: Joi.string().allow('').required(),
  name: Joi.string().allow(null).required(),
  provider: Joi.string().allow(null).required(),
  lockLocationType: Joi.string().valid('door', 'cabinet').required(),
});

const nodeStateFields = {
  level: Joi.string()
    .valid(...LOCATION_LEVELS)
    .required(),
  _id: id.required(),
  name: Joi.string().required(),
  external_id: Joi.string().allow(null).required(),
  site_id: id,
  building_id: id,
  floor_id: id,
  room_id: id,
  locks: Joi.array().items(lockBindingSchema),
  ...siteTimeFields,
  version: Joi.number().integer().min(1).required(),
};

/** One node's state (a commit's change, a snapshot's node): the replicas check a large list in slices (libs/layout). */
export const locationNodeStateSchema = Joi.object<LocationNodeState>(nodeStateFields);

export const locationEventMessageSchema = Joi.object<LocationEventMessage>({
  company_id: id.required(),
  kind: Joi.string()
    .valid(...LOCATION_EVENT_KINDS)
    .required(),
  version: Joi.number().integer().min(1).required(),
  commit_first: Joi.number().integer().min(1).required(),
  commit_last: Joi.number().integer().min(Joi.ref('version')).required(),
  occurred_at: Joi.string().isoDate().required(),
  node: Joi.object({
    ...nodeStateFields,
    path: Joi.array()
      .items(
        Joi.object({
          level: Joi.string()
            .valid(...LOCATION_LEVELS)
            .required(),
          _id: id.required(),
          name: Joi.string().required(),
        }),
      )
      .required(),
  }).when('kind', { is: Joi.valid('layout.resync', 'layout.committed'), then: Joi.forbidden(), otherwise: Joi.required() }),
  changes: Joi.object({ nodes: Joi.array().items(locationNodeStateSchema).required(), deleted: Joi.array().items(id).required() }).when('kind', {
    is: 'layout.committed',
    then: Joi.optional(),
    otherwise: Joi.forbidden(),
  }),
  lock: lockBindingSchema.when('kind', { is: Joi.valid('lock.bound', 'lock.unbound'), then: Joi.required(), otherwise: Joi.forbidden() }),
  previous: Joi.object({ name: Joi.string(), external_id: Joi.string().allow(null), ...siteTimeFields }),
  correlation_id: Joi.string().required(),
});

export const layoutSnapshotSchema = Joi.object<LayoutSnapshot>({
  company_id: id.required(),
  version: Joi.number().integer().min(0).required(),
  nodes: Joi.array().items(locationNodeStateSchema).required(),
});
