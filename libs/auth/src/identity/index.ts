import type { Connection } from '@smartlock/db';
import { callbackEndpointStore } from './callback-endpoints';
import { credentialStore } from './credentials';
import { lockStore } from './locks';
import { callbackEndpointModels, identityModels } from './models';
import { portalStore } from './portal-sessions';

/**
 * The identity aggregate's data: companies, API keys and ingest tokens with when each was last used,
 * portal links and sessions, the one-way revocations of all four, callback endpoints with their
 * versions, lock owners and lock accounts (database `smartlock_identity`). libs/auth's checks and
 * admin-api's use cases call the functions below and never the models: the queries, the indexes
 * they need (models.ts) and what the database does or does not guarantee live in this folder, so
 * that a change of what it guarantees (atomic conditional updates, docs/adr/0101) is a change of it
 * alone. One file per family of records (credentials, portal sessions, callback endpoints, locks).
 *
 * What the writes rely on:
 * - an insert against a unique index decides, the one write every supported server makes atomic:
 *   an API key's prefix, an ingest token's hash, a portal session's link (single use), a lock's
 *   owner (`_id`), a company's lock account (company, provider, label), a company's first callback
 *   endpoint, each version of an endpoint (libs/db nextVersion) and each revocation (libs/db
 *   transitionOnce);
 * - an update may be applied as a read then a write of the whole record, so no two writers update
 *   one record where one could undo the other: a key's or token's last use is a record of its own
 *   (credential_usage), a revocation is decided by its insert and then written alike by whoever
 *   finishes it, an endpoint moves one version at a time; the remaining updates are one writer's
 *   (a link's `used_at`, an account's sync or secret, a lock's name and battery);
 * - a read by `_id` is served from an index everywhere; the reads of every request (a key, a token,
 *   a portal session) are by `_id` (credentialLookups remembers the id of a prefix or hash).
 */
export function identityStore(conn: Connection) {
  const m = identityModels(conn);
  return { ...credentialStore(m), ...portalStore(m), ...callbackEndpointStore(callbackEndpointModels(conn)), ...lockStore(m) };
}
export type IdentityStore = ReturnType<typeof identityStore>;

/** Every collection of the slice with its indexes, for admin-api's `collections` part (its writer creates them at start). */
export function identityCollections(conn: Connection) {
  return [...Object.values(identityModels(conn)), ...Object.values(callbackEndpointModels(conn))];
}
