import { ACCESS_TYPES } from '../booking/actions';
import { REFERENCE_ID, REFERENCE_ID_RULE } from '../booking/reference-id';
import { SuccessCodes } from '../envelopes/codes';
import { employeeAccessSchema, employeeListQuerySchema } from '../employee/employee-access.request';
import { deadLetterListQuerySchema, deadLetterOperationsQuerySchema, deadLetterPurgeSchema, deadLetterReplaySchema } from '../operations/dead-letters.requests';
import {
  LOCK_ACCOUNT_PROVIDERS,
  callbackEndpointSchema,
  companyListQuerySchema,
  createApiKeySchema,
  createCompanySchema,
  createIngestTokenSchema,
} from '../identity/admin.requests';
import { PORTAL_CAPABILITIES, PORTAL_ON_CALL, PORTAL_SESSION_COOKIE, createPortalLinkSchema, openPortalSessionSchema } from '../identity/portal.requests';
import { layoutImportSchema } from '../location/layout-import.request';
import { LOCATION_LEVELS, LocationLevel } from '../location/location-event.message';
import { SITE_TIME_FIELDS } from '../location/site-time';
import {
  COMPANY_HEADER,
  CORRELATION_HEADER,
  OBJECT_ID_SCHEMA,
  WAIT_PARAM,
  body,
  envelope,
  errorResponses,
  json,
  pageParams,
  pathParam,
  queryParam,
  securitySchemes,
  sharedSchemas,
} from './components';
import { JsonSchema, arr, bool, constant, dateTime, fromJoi, int, nullable, obj, oneOf, pattern, ref, str } from './schema';
import { LOCK_MAC, LOCK_PROVIDER, NOT_TTLOCK, webhooks, webhookSchemas } from './webhooks';
import { portalOverviewPaths } from './portal-overview';
import {
  CSRF_HEADER,
  callbackHealthPaths,
  callbackTestPaths,
  deliveriesListing,
  onCallDeadLetterPaths,
  onCallLinkPaths,
  portalDataPaths,
  portalErrors,
  portalLayoutPaths,
  portalOp,
  portalSession,
} from './portal';

const PLURAL: Record<LocationLevel, string> = { site: 'sites', building: 'buildings', floor: 'floors', room: 'rooms', bed: 'beds' };
/** A site's time (libs/contracts site-time.ts). */
const SITE_TIME_SCHEMA = {
  time_zone: str({
    maxLength: 64,
    description: 'IANA time zone of the site, e.g. America/New_York (default UTC). Dates and zone-less times of its bookings are its local time.',
  }),
  check_in_time: str({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:mm: when a stay sent as a date begins (default 15:00).' }),
  check_out_time: str({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:mm: when a stay sent as a date ends (default 11:00).' }),
};
const LEVEL_CODE: Record<LocationLevel, number> = {
  site: SuccessCodes.SITES_RETRIEVED,
  building: SuccessCodes.BUILDINGS_RETRIEVED,
  floor: SuccessCodes.FLOORS_RETRIEVED,
  room: SuccessCodes.ROOMS_RETRIEVED,
  bed: SuccessCodes.BEDS_RETRIEVED,
};
const ANCESTORS: Record<LocationLevel, string[]> = {
  site: [],
  building: ['site_id'],
  floor: ['site_id', 'building_id'],
  room: ['site_id', 'building_id', 'floor_id'],
  bed: ['site_id', 'building_id', 'floor_id', 'room_id'],
};

const apiKey = [{ apikey: [] }];
const admin = [{ adminToken: [] }];
const referenceId = pattern(REFERENCE_ID, { description: `The booking's reference_id: ${REFERENCE_ID_RULE}.` });
const nullableNamed = nullable(ref('Named'));

/** A company's callback endpoint as the admin API shows it: never a secret's value. */
const callbackEndpoint: Record<string, JsonSchema> = {
  company_id: OBJECT_ID_SCHEMA,
  url: str(),
  auth: obj(
    {
      type: oneOf(['hmac', 'bearer', 'basic', 'api_key']),
      secrets: arr(obj({ created_at: dateTime(), valid_until: nullable(dateTime()) }), {
        description: 'hmac: the live signing secrets, newest first (never their values).',
      }),
      username: str(),
      header: str(),
    },
    ['secrets', 'username', 'header'],
  ),
  version: int(),
  created_at: dateTime(),
  updated_at: dateTime(),
};

/** A credential of a booking's access (v4, and the portal's). */
const bookingCredential = obj(
  {
    type: oneOf(ACCESS_TYPES),
    lock: ref('LockRef'),
    place: ref('Place'),
    valid_from: dateTime(),
    valid_to: dateTime(),
    keyId: nullable(int()),
    lockData: nullable(str()),
    remoteUnlock: constant(true),
    passcode: nullable(str()),
    passcodeId: nullable(int()),
    card_id: nullable(str()),
    cardId: nullable(int()),
  },
  ['keyId', 'lockData', 'remoteUnlock', 'passcode', 'passcodeId', 'card_id', 'cardId'],
  {
    description:
      "EKEY: keyId, lockData. REMOTE: keyId, lockData, remoteUnlock. PASSCODE: passcode, passcodeId. CARD: card_id (the booking's card number), cardId (the lock vendor's id).",
  },
);
/** A revoked credential of a booking's access (v4, and the portal's). */
const revokedCredential = obj(
  {
    type: oneOf(ACCESS_TYPES),
    lock: ref('LockRef'),
    place: ref('Place'),
    keyId: nullable(int()),
    passcodeId: nullable(int()),
    card_id: nullable(str()),
    cardId: nullable(int()),
    revoked_at: dateTime(),
  },
  ['keyId', 'passcodeId', 'card_id', 'cardId'],
  { description: 'A revoked credential: named, never its secret.' },
);
const schemas: Record<string, JsonSchema> = {
  ...sharedSchemas,
  ...webhookSchemas,
  Named: obj({ name: str(), _id: str() }, [], { description: 'A place: its name and `_id`.' }),
  LocationLevelRef: obj({ name: str(), _id: str(), external_id: nullable(str()) }, [], {
    description: "One level of a location row: `{ name, _id }` and the customer's external id (or null).",
  }),
  LocationSiteRef: obj({ name: str(), _id: str(), external_id: nullable(str()), ...SITE_TIME_SCHEMA }, [], {
    description: "The site of a location row: as LocationLevelRef, with the site's time zone and hours.",
  }),
  LocationRow: obj(
    {
      site: ref('LocationSiteRef'),
      building: ref('LocationLevelRef'),
      floor: ref('LocationLevelRef'),
      room: ref('LocationLevelRef'),
      bed: ref('LocationLevelRef'),
    },
    ['bed'],
    { description: 'One Site → Bed path; `bed` is absent for a door-only room.' },
  ),
  LocationNode: obj(
    { _id: str(), name: str(), external_id: nullable(str()), site_id: str(), building_id: str(), floor_id: str(), room_id: str(), ...SITE_TIME_SCHEMA },
    ['site_id', 'building_id', 'floor_id', 'room_id', ...SITE_TIME_FIELDS],
    { description: 'A node of one level, with the `_id` of each ancestor; a site also has its time zone and hours.' },
  ),
  Pagination: obj({ currentPage: int(), totalPages: int(), hasNext: bool(), hasPrevious: bool() }),
  Lock: obj({ lock_id: str(), lock_mac: str(), name: nullable(str()), provider: nullable(str()), lockLocationType: oneOf(['door', 'cabinet']) }),
  LayoutItem: obj({ level: oneOf(LOCATION_LEVELS), _id: str(), name: str() }),
  LockPlacement: obj({ lock_id: str(), level: oneOf(LOCATION_LEVELS), _id: str() }),
  LockRef: obj({ lockId: str(), lockMac: LOCK_MAC, lockLocationType: oneOf(['door', 'cabinet']), lockProvider: LOCK_PROVIDER }),
  Place: obj({ site: nullableNamed, room: nullableNamed, bed: nullableNamed }),
  Validity: nullable(
    obj({
      check_in: nullable(
        str({
          description:
            "The instant access starts (ISO 8601 UTC) once provisioned; while pending, as sent (a date or a zone-less time is the site's local time).",
        }),
      ),
      check_out: nullable(str({ description: 'The instant access ends, as check_in.' })),
      time_zone: nullable(str({ description: "The site's IANA time zone the stay was resolved in (its dates and local times); null while pending." })),
    }),
  ),
  AccessStatus: oneOf(['pending', 'active', 'revoked', 'failed'], {
    description: 'pending: accepted, not provisioned yet; active; revoked; failed (see reason).',
  }),
  EmployeeAccess: obj({
    employee_id: OBJECT_ID_SCHEMA,
    schedule_id: OBJECT_ID_SCHEMA,
    access_type: oneOf(ACCESS_TYPES),
    startDate: dateTime(),
    endDate: dateTime(),
    locations: arr(obj({ site: ref('Named'), room: ref('Named'), bed: nullableNamed })),
    ref_id: str(),
    type: oneOf(['PERMANENT', 'TIMED']),
    contact: nullable(str()),
    status: oneOf(['active', 'revoked']),
    revoked_at: nullable(dateTime()),
    version: int(),
  }),
  Company: obj({ _id: OBJECT_ID_SCHEMA, name: str(), created_at: dateTime() }),
  ApiKey: obj({
    _id: OBJECT_ID_SCHEMA,
    company_id: OBJECT_ID_SCHEMA,
    name: str(),
    prefix: str({ description: 'The first characters of the key, to recognise it; the key itself is shown once, at creation.' }),
    expires_at: nullable(dateTime()),
    revoked_at: nullable(dateTime()),
    last_used_at: nullable(dateTime()),
    portal_session_id: nullable({
      ...OBJECT_ID_SCHEMA,
      description: "The portal session that issued it (null: the admin API); the operator's session list names its link and who it was issued to.",
    }),
    created_at: dateTime(),
  }),
  IngestToken: obj({
    _id: OBJECT_ID_SCHEMA,
    company_id: OBJECT_ID_SCHEMA,
    site_id: str(),
    provider: str(),
    revoked_at: nullable(dateTime()),
    expires_at: nullable(dateTime()),
    last_used_at: nullable(dateTime()),
    portal_session_id: nullable({ ...OBJECT_ID_SCHEMA, description: 'The portal session that issued it (null: the admin API).' }),
    created_at: dateTime(),
  }),
  CallbackEndpoint: obj(callbackEndpoint),
  BookingCredential: bookingCredential,
  RevokedCredential: revokedCredential,
};

/** `GET` of one location level (or `/all`), in v3 and v4 alike. */
function locationRead(version: 'v3' | 'v4', level: LocationLevel | 'all') {
  const all = level === 'all';
  const key = all ? 'locations' : PLURAL[level];
  const filters = all ? [] : ANCESTORS[level].map((f) => queryParam(f, OBJECT_ID_SCHEMA, `Only the ${PLURAL[level]} under this ${f.replace('_id', '')}.`));
  return {
    get: {
      tags: ['Locations'],
      operationId: `${version}List${all ? 'AllLocations' : PLURAL[level][0].toUpperCase() + PLURAL[level].slice(1)}`,
      summary: all ? 'The full hierarchy, one row per Site → Bed path' : `The company's ${PLURAL[level]}`,
      ...(version === 'v3' ? { description: 'Identical to the v4 endpoint (SPEC Versioning, rule 3).' } : {}),
      security: apiKey,
      parameters: [...pageParams('limit', 100, 100, true), ...filters, COMPANY_HEADER, CORRELATION_HEADER],
      responses: {
        '200': json(
          all ? 'Locations retrieved (code 7010).' : `${PLURAL[level]} retrieved (code ${LEVEL_CODE[level]}).`,
          envelope(
            all ? SuccessCodes.LOCATIONS_RETRIEVED : LEVEL_CODE[level],
            obj({ [key]: arr(ref(all ? 'LocationRow' : 'LocationNode')), pagination: ref('Pagination'), total: int() }),
          ),
          { headers: { ETag: { description: 'Weak validator of the page: send it as If-None-Match for a 304.', schema: str() } } },
        ),
        '304': { description: 'Not modified (If-None-Match matched the ETag).' },
        ...errorResponses('api', ['400', '401', '403', '503']),
      },
    },
  };
}

function externalIdPatch(version: 'v3' | 'v4', level: LocationLevel) {
  return {
    patch: {
      tags: ['Locations'],
      operationId: `${version}SetExternalId${level[0].toUpperCase()}${level.slice(1)}`,
      summary: `Set or clear the external id of a ${level}`,
      security: apiKey,
      parameters: [pathParam('id', OBJECT_ID_SCHEMA, `The ${level}'s _id.`), COMPANY_HEADER, CORRELATION_HEADER],
      requestBody: body(obj({ external_id: nullable(str({ minLength: 1, maxLength: 100 })) }), 'null clears the mapping.'),
      responses: {
        '200': json('External id updated (code 7016).', envelope(SuccessCodes.EXTERNAL_ID_UPDATED, ref('LocationNode'))),
        ...errorResponses('api', ['400', '401', '403', '404', '409', '413', '503'], {
          '409': 'The external id is already used on this level: `data` holds `{ _id, level, external_id }` of the holder.',
        }),
      },
    },
  };
}

const BULK_ROW = obj({ level: oneOf(LOCATION_LEVELS), id: OBJECT_ID_SCHEMA, external_id: nullable(str({ minLength: 1, maxLength: 100 })) });

function externalIdsBulk(version: 'v3' | 'v4') {
  return {
    put: {
      tags: ['Locations'],
      operationId: `${version}SetExternalIds`,
      summary: 'Set many external ids at once',
      description: 'At most 1000 rows; each row succeeds or fails on its own.',
      security: apiKey,
      parameters: [COMPANY_HEADER, CORRELATION_HEADER],
      // Rows are judged one by one: a row of another shape is answered `invalid`, not the request.
      requestBody: body(
        arr(
          {
            oneOf: [
              BULK_ROW,
              {
                not: BULK_ROW,
                description: 'Any other value: that row is answered with status `invalid` and its problem in `message`; the other rows are processed.',
              },
            ],
          },
          { maxItems: 1000 },
        ),
      ),
      responses: {
        '200': json(
          'Rows processed (code 7017).',
          envelope(
            SuccessCodes.EXTERNAL_IDS_PROCESSED,
            obj({
              results: arr(
                obj(
                  { level: {}, id: {}, external_id: {}, status: oneOf(['updated', 'conflict', 'not_found', 'invalid']), holder_id: str(), message: str() },
                  ['holder_id', 'message'],
                  {
                    description:
                      'The row as sent (level, id, external_id), its outcome, the `_id` holding the value on a conflict, the problem of an invalid row.',
                  },
                ),
              ),
              updated: int(),
              conflict: int(),
              not_found: int(),
              invalid: int(),
            }),
          ),
        ),
        ...errorResponses('api', ['400', '401', '403', '413', '503']),
      },
    },
  };
}

const companyParam = pathParam('companyId', OBJECT_ID_SCHEMA);
const adminOp = (tag: string, operationId: string, summary: string, extra: Record<string, unknown>) => ({
  tags: [tag],
  operationId,
  summary,
  security: admin,
  ...extra,
});

function adminLocationPaths(): Record<string, unknown> {
  const base = '/admin/v1/companies/{companyId}';
  const write = (code: number, data: JsonSchema, status = '200') => ({
    [status]: json(`Done (code ${code}).`, envelope(code, data)),
    ...errorResponses('api', ['400', '401', '404', '409', '413', '503']),
  });
  const withVersion = (props: Record<string, JsonSchema>, optional: string[] = []) =>
    obj({ version: int({ description: 'The layout version this change made.' }), ...props }, optional);
  const nodeWithVersion = withVersion(
    { _id: str(), name: str(), external_id: nullable(str()), site_id: str(), building_id: str(), floor_id: str(), room_id: str(), ...SITE_TIME_SCHEMA },
    ['site_id', 'building_id', 'floor_id', 'room_id', ...SITE_TIME_FIELDS],
  );
  const importReport = {
    created: arr(obj({ level: oneOf(LOCATION_LEVELS), _id: str(), name: str(), parent_id: nullable(str()) })),
    renamed: arr(obj({ level: oneOf(LOCATION_LEVELS), _id: str(), name: str(), previous_name: str() })),
    kept: arr(ref('LayoutItem')),
    removed: arr(ref('LayoutItem')),
    locks: obj({ bound: arr(ref('LockPlacement')), unbound: arr(ref('LockPlacement')) }),
    times: arr(
      obj({
        level: constant('site'),
        _id: str(),
        name: str(),
        ...SITE_TIME_SCHEMA,
        previous: obj(SITE_TIME_SCHEMA, [...SITE_TIME_FIELDS], { description: 'The fields that change, as they were.' }),
      }),
      { description: 'Sites whose time zone or hours the document changes: their live bookings sent as dates or local times are re-timed (ADR 0107).' },
    ),
  };
  const paths: Record<string, unknown> = {
    [`${base}/layout`]: {
      put: adminOp('Layout administration', 'importLayout', 'Import a whole layout', {
        description:
          'Matches the document to the stored layout by names (ignoring case), creates what is missing and binds the listed locks; with `prune=true` removes what the document does not list (refused while a removed place is occupied, unless `force=true`). With `dry_run=true`, the same report on the current layout, nothing written (code 7038): a preview of the import.',
        parameters: [
          companyParam,
          queryParam('prune', oneOf(['true', 'false'])),
          queryParam('force', oneOf(['true', 'false'])),
          queryParam('dry_run', oneOf(['true', 'false']), 'true: only report what the import would change; nothing is written.'),
        ],
        requestBody: body(fromJoi(layoutImportSchema)),
        responses: {
          '200': json(
            'Imported (code 7030), or previewed with dry_run (code 7038, `dry_run: true`, `version` the one previewed against; the `_id` of a place to create is not the one it will get).',
            {
              anyOf: [
                envelope(SuccessCodes.LAYOUT_IMPORTED, withVersion(importReport)),
                envelope(SuccessCodes.LAYOUT_IMPORT_PREVIEWED, withVersion({ dry_run: constant(true), ...importReport })),
              ],
            },
          ),
          ...errorResponses('api', ['400', '401', '404', '409', '413', '503']),
        },
      }),
    },
    [`${base}/locks/{lockId}`]: {
      put: adminOp('Layout administration', 'bindLock', 'Bind a lock to a room (door) or a bed (cabinet)', {
        parameters: [companyParam, pathParam('lockId', str({ maxLength: 64 }))],
        requestBody: body(
          obj(
            {
              room_id: OBJECT_ID_SCHEMA,
              bed_id: OBJECT_ID_SCHEMA,
              lock_mac: str({ minLength: 1, maxLength: 64 }),
              name: nullable(str({ minLength: 1, maxLength: 100 })),
              provider: nullable(str({ minLength: 1, maxLength: 100 })),
            },
            ['room_id', 'bed_id', 'lock_mac', 'name', 'provider'],
            {
              description:
                "Exactly one of room_id and bed_id. `lock_mac` is required for a TTLock lock; another vendor's lock (`nuki:…`) may leave it out (stored empty: the vendor gives none).",
            },
          ),
        ),
        responses: write(SuccessCodes.LOCK_BOUND, withVersion({ lock: ref('Lock'), node: ref('LocationNode') })),
      }),
      delete: adminOp('Layout administration', 'unbindLock', 'Unbind a lock', {
        parameters: [companyParam, pathParam('lockId', str())],
        responses: write(SuccessCodes.LOCK_UNBOUND, withVersion({ lock_id: str(), node: ref('LocationNode') })),
      }),
    },
    [`${base}/locks`]: {
      get: adminOp('Layout administration', 'listCompanyLocks', "The company's locks and where each is bound", {
        description: "Every lock the service operates has one owner company; a layout binds only its own company's locks.",
        parameters: [companyParam, ...pageParams('limit', 100, 100, false)],
        responses: {
          '200': json(
            'Locks retrieved (code 7039).',
            envelope(
              SuccessCodes.LOCKS_RETRIEVED,
              obj({
                page: int(),
                limit: int(),
                locks: arr(
                  obj({
                    lock_id: str({ description: "TTLock's lockId as it is; another vendor's id with its provider (`nuki:17012345`, docs/adr/0109)." }),
                    provider: oneOf(LOCK_ACCOUNT_PROVIDERS),
                    account_id: nullable({
                      ...OBJECT_ID_SCHEMA,
                      description: "The company's lock account it was found in; null: the operator's service account.",
                    }),
                    name: nullable(str({ description: "As the vendor names it, at the account's last sync." })),
                    battery: nullable(obj({ percent: nullable(int()), low: bool() })),
                    source: oneOf(['assigned', 'import', 'account'], {
                      description:
                        "assigned: by the operator; import: claimed by the operator's layout import; account: found in one of the company's lock accounts.",
                    }),
                    assigned_at: dateTime(),
                    bound_to: nullable(obj({ level: oneOf(['room', 'bed']), _id: str(), name: str() })),
                  }),
                ),
              }),
            ),
          ),
          ...errorResponses('api', ['400', '401', '404', '503']),
        },
      }),
    },
    [`${base}/locks/{lockId}/owner`]: {
      put: adminOp('Layout administration', 'assignLock', "Make a lock of the service's vendor account the company's", {
        description: "201 when assigned now, 200 when it was the company's already; 409 when another company holds it (not named).",
        parameters: [companyParam, pathParam('lockId', str({ pattern: '^[A-Za-z0-9_.:-]{1,64}$' }))],
        responses: {
          '201': json('Assigned (code 7040).', envelope(SuccessCodes.LOCK_ASSIGNED, obj({ lock_id: str(), created: bool() }))),
          ...write(SuccessCodes.LOCK_ASSIGNED, obj({ lock_id: str(), created: bool() })),
        },
      }),
      delete: adminOp('Layout administration', 'releaseLock', 'Release a lock: no company holds it any more', {
        description: "409 while the lock is bound in the company's layout; 404 when it is not the company's.",
        parameters: [companyParam, pathParam('lockId', str({ pattern: '^[A-Za-z0-9_.:-]{1,64}$' }))],
        responses: write(SuccessCodes.LOCK_RELEASED, obj({ lock_id: str() })),
      }),
    },
    [`${base}/occupancy/resync`]: {
      post: adminOp('Layout administration', 'resyncOccupancy', 'Rebuild the logs of who occupies which place', {
        description: "Asks the ingest gateway and access-api to send the company's booking and access messages again.",
        parameters: [companyParam],
        responses: write(SuccessCodes.OCCUPANCY_RESYNCED, obj({ booking_events: int(), access_events: int() })),
      }),
    },
    [`${base}/snapshot`]: {
      get: adminOp('Layout administration', 'layoutSnapshot', 'The whole layout as nodes, with its version', {
        parameters: [companyParam],
        responses: {
          '200': json(
            'Layout snapshot (code 7036).',
            envelope(
              SuccessCodes.LAYOUT_SNAPSHOT,
              obj({
                company_id: str(),
                version: int(),
                nodes: arr(
                  obj(
                    {
                      level: oneOf(LOCATION_LEVELS),
                      _id: str(),
                      name: str(),
                      external_id: nullable(str()),
                      version: int(),
                      site_id: str(),
                      building_id: str(),
                      floor_id: str(),
                      room_id: str(),
                      locks: arr(ref('Lock')),
                      ...SITE_TIME_SCHEMA,
                    },
                    ['site_id', 'building_id', 'floor_id', 'room_id', 'locks', ...SITE_TIME_FIELDS],
                  ),
                ),
              }),
            ),
          ),
          ...errorResponses('api', ['400', '401', '404', '503']),
        },
      }),
    },
  };
  for (const level of LOCATION_LEVELS) {
    const parent = ANCESTORS[level].at(-1);
    const Level = `${level[0].toUpperCase()}${level.slice(1)}`;
    paths[`${base}/${PLURAL[level]}`] = {
      post: adminOp('Layout administration', `create${Level}`, `Create a ${level}`, {
        parameters: [companyParam],
        requestBody: body(obj({ name: str({ minLength: 1, maxLength: 100 }), ...(parent ? { [parent]: OBJECT_ID_SCHEMA } : {}) })),
        responses: write(SuccessCodes.LOCATION_NODE_CREATED, nodeWithVersion, '201'),
      }),
    };
    paths[`${base}/${PLURAL[level]}/{id}`] = {
      patch: adminOp(
        'Layout administration',
        `rename${Level}`,
        level === 'site' ? 'Rename a site, or set its time zone and check-in/check-out hours' : `Rename a ${level}`,
        {
          ...(level === 'site'
            ? {
                description:
                  'Any of `name`, `time_zone`, `check_in_time` and `check_out_time` (at least one). An unknown zone or a time not `HH:mm` is a 400 whose message starts with the field.',
              }
            : {}),
          parameters: [companyParam, pathParam('id', OBJECT_ID_SCHEMA)],
          requestBody: body(
            level === 'site'
              ? obj({ name: str({ minLength: 1, maxLength: 100 }), ...SITE_TIME_SCHEMA }, ['name', ...SITE_TIME_FIELDS])
              : obj({ name: str({ minLength: 1, maxLength: 100 }) }),
          ),
          responses: write(SuccessCodes.LOCATION_NODE_UPDATED, nodeWithVersion),
        },
      ),
      delete: adminOp('Layout administration', `delete${Level}`, `Delete a ${level} and everything under it`, {
        description: 'Refused (409) while a guest or employee occupies it, unless `force=true`.',
        parameters: [companyParam, pathParam('id', OBJECT_ID_SCHEMA), queryParam('force', oneOf(['true', 'false']))],
        responses: write(SuccessCodes.LOCATION_NODE_DELETED, withVersion({ removed: arr(ref('LayoutItem')) })),
      }),
    };
  }
  return paths;
}

function accessPaths(): Record<string, unknown> {
  const notFound = errorResponses('api', ['400', '401', '403', '404', '503'], {
    '404': "No such booking for the key's company (`Booking <referenceId> not found`).",
  });
  return {
    '/api/v4/bookings/{referenceId}/access': {
      get: {
        tags: ['Access'],
        operationId: 'getBookingAccess',
        summary: "A booking's credentials (passcode, mobile key, card, remote)",
        description:
          'With `wait`, answered as soon as the booking has its first outcome (`status` active, failed or revoked), or when the wait ends with its current state; an unknown booking answers 404 at once. Without `wait`: poll the event until COMPLETED (SPEC: wait about 5 s first), then read the credentials here.',
        security: apiKey,
        parameters: [pathParam('referenceId', referenceId), WAIT_PARAM, COMPANY_HEADER, CORRELATION_HEADER],
        responses: {
          '200': json(
            'Booking access retrieved (code 7020).',
            envelope(
              SuccessCodes.BOOKING_ACCESS_RETRIEVED,
              obj({
                reference_id: str(),
                status: ref('AccessStatus'),
                reason: nullable(str()),
                validity: ref('Validity'),
                updated_at: dateTime(),
                credentials: arr(ref('BookingCredential')),
                revoked: arr(ref('RevokedCredential')),
              }),
            ),
          ),
          ...errorResponses('api', ['400', '401', '403', '404', '503'], {
            '400': 'An invalid `referenceId`, or `wait` not a whole number from 0 to 30.',
            '404': "No such booking for the key's company (`Booking <referenceId> not found`).",
            '429': 'Too many waiting requests of this API key (or the rate limit); see `Retry-After`.',
          }),
        },
      },
    },
    '/api/v3/booking/getLockData/{referenceId}': {
      get: {
        tags: ['Access'],
        operationId: 'getLockData',
        summary: "A booking's e-keys, one per lock (the v3 replacement of the v2 endpoint)",
        security: apiKey,
        parameters: [pathParam('referenceId', referenceId), COMPANY_HEADER, CORRELATION_HEADER],
        responses: {
          '200': json(
            'Lock data retrieved (code 7021).',
            envelope(
              SuccessCodes.LOCK_DATA_RETRIEVED,
              obj({
                reference_id: str(),
                status: ref('AccessStatus'),
                validity: ref('Validity'),
                locks: arr(
                  obj(
                    {
                      lockId: str(),
                      lockMac: LOCK_MAC,
                      lockLocationType: oneOf(['door', 'cabinet']),
                      lockData: nullable(str({ description: `The e-key's data (TTLock); ${NOT_TTLOCK}.` })),
                      keyId: nullable(int({ description: `The e-key's id (TTLock); ${NOT_TTLOCK}.` })),
                      site: nullableNamed,
                      room: nullableNamed,
                      bed: nullableNamed,
                      validFrom: dateTime(),
                      validTo: dateTime(),
                      lockProvider: LOCK_PROVIDER,
                    },
                    [],
                    {
                      description:
                        "One per e-key on a TTLock lock; one per credential on another vendor's lock (a Nuki keypad code), whose code is read in v4.",
                    },
                  ),
                ),
              }),
            ),
          ),
          ...notFound,
        },
      },
    },
    '/api/v2/booking/access': {
      get: {
        tags: ['Access'],
        operationId: 'getLegacyAccess',
        summary: "A booking's active e-keys (SPEC credential records)",
        // deprecated, with its headers, by markDeprecated (DEPRECATED_FAMILIES)
        security: apiKey,
        parameters: [
          queryParam('ref_id', referenceId, 'The booking identifier.', true),
          queryParam('provider', str({ pattern: '^[A-Za-z0-9._:-]{1,64}$' }), "The booking's provider; default the service's own (`direct`)."),
          COMPANY_HEADER,
          CORRELATION_HEADER,
        ],
        responses: {
          '200': json(
            'Credentials fetched (code 7005).',
            envelope(
              SuccessCodes.LEGACY_CREDENTIALS_FETCHED,
              arr(
                obj(
                  {
                    lockData: nullable(str({ description: `The e-key's data (TTLock); ${NOT_TTLOCK}.` })),
                    lockMac: LOCK_MAC,
                    lockId: str(),
                    lockLocationType: oneOf(['door', 'cabinet']),
                    roomNumber: nullable(str()),
                    bedNumber: nullable(str()),
                    siteName: str(),
                    keyId: nullable(int({ description: `The e-key's id (TTLock); ${NOT_TTLOCK}.` })),
                    lockProvider: LOCK_PROVIDER,
                  },
                  [],
                  {
                    description:
                      "SPEC's credential record, then `lockProvider`. One per e-key on a TTLock lock; one per credential on another vendor's lock (a Nuki keypad code), whose code is read in v4.",
                  },
                ),
              ),
            ),
          ),
          ...notFound,
        },
      },
    },
  };
}

function employeePaths(): Record<string, unknown> {
  const one = (description: string, status = '200') => ({
    [status]: json(description, obj({ success: constant(true), message: str(), data: ref('EmployeeAccess') })),
  });
  const scheduleId = pathParam('scheduleId', OBJECT_ID_SCHEMA);
  return {
    '/api/v3/access/employee': {
      post: {
        tags: ['Employee access'],
        operationId: 'createEmployeeAccess',
        summary: 'Create an access schedule for an employee',
        description: 'Rules over the hierarchy: each of site_id … bed_id is an `_id` or `*` (everything at that level and below); several rules combine.',
        security: apiKey,
        parameters: [COMPANY_HEADER, CORRELATION_HEADER],
        requestBody: body(fromJoi(employeeAccessSchema)),
        responses: {
          ...one('Employee access created.', '201'),
          ...errorResponses('employee', ['400', '401', '403', '409', '413', '503'], {
            '400': 'Validation failed, e.g. a TIMED schedule without startDate: every problem in `details`.',
            '409': 'ref_id already used by another schedule.',
          }),
        },
      },
      get: {
        tags: ['Employee access'],
        operationId: 'listEmployeeAccess',
        summary: "The company's employee access schedules, newest first",
        security: apiKey,
        parameters: [...queryParamsOf(fromJoi(employeeListQuerySchema)), COMPANY_HEADER, CORRELATION_HEADER],
        responses: {
          '200': json(
            'Employee access schedules.',
            obj({ success: constant(true), message: str(), data: arr(ref('EmployeeAccess')), pagination: obj({ page: int(), limit: int(), total: int() }) }),
          ),
          ...errorResponses('employee', ['400', '401', '403', '503']),
        },
      },
    },
    '/api/v3/access/employee/{scheduleId}': {
      get: {
        tags: ['Employee access'],
        operationId: 'getEmployeeAccess',
        summary: 'One schedule',
        security: apiKey,
        parameters: [scheduleId, COMPANY_HEADER, CORRELATION_HEADER],
        responses: { ...one('Employee access schedule.'), ...errorResponses('employee', ['400', '401', '403', '404', '503']) },
      },
      delete: {
        tags: ['Employee access'],
        operationId: 'revokeEmployeeAccess',
        summary: 'Revoke a schedule (revoking twice is a no-op)',
        security: apiKey,
        parameters: [scheduleId, COMPANY_HEADER, CORRELATION_HEADER],
        responses: { ...one('Employee access revoked.'), ...errorResponses('employee', ['400', '401', '403', '404', '503']) },
      },
    },
  };
}

/** One query parameter per property of an object schema generated from a joi query schema. */
function queryParamsOf(schema: JsonSchema): unknown[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema.required ?? []) as string[];
  return Object.entries(properties).map(([name, s]) => queryParam(name, s, undefined, required.includes(name)));
}

/**
 * Who manages a company's keys, tokens and callback endpoint: the operator (admin token, the company
 * in the path) or a portal session (its cookie; the company is the session's, never in the path).
 * One set of handlers serves both in admin-api, so one description documents both.
 */
interface Audience {
  /** The company's collections: `/admin/v1/companies/{companyId}` or `/portal/api`. */
  base: string;
  /** Where a key or token is named by its id: `/admin/v1` or `/portal/api`. */
  byId: string;
  params: unknown[];
  op(
    operationId: string,
    summary: string,
    write: boolean,
    extra: { description?: string; parameters?: unknown[]; requestBody?: unknown; responses: Record<string, unknown> },
  ): Record<string, unknown>;
}

const OPERATOR: Audience = {
  base: '/admin/v1/companies/{companyId}',
  byId: '/admin/v1',
  params: [companyParam],
  op: (operationId, summary, _write, extra) => adminOp('Administration', operationId, summary, extra),
};

const PORTAL: Audience = {
  base: '/portal/api',
  byId: '/portal/api',
  params: [],
  op: portalOp,
};

function companyIdentityPaths(a: Audience): Record<string, unknown> {
  const keyId = pathParam('keyId', OBJECT_ID_SCHEMA);
  const tokenId = pathParam('tokenId', OBJECT_ID_SCHEMA);
  const errors = (statuses: string[]) => errorResponses('api', statuses);
  return {
    [`${a.base}/api-keys`]: {
      post: a.op('createApiKey', 'Issue an API key (shown once)', true, {
        description:
          'A portal session needs `keys_tokens` and every capability the key exercises: `layout`, `bookings`, `credentials` (403 naming the first it lacks). The key records the session.',
        parameters: a.params,
        requestBody: body(fromJoi(createApiKeySchema)),
        responses: {
          '201': json(
            'The key: `key` is in this response only.',
            obj({ _id: OBJECT_ID_SCHEMA, key: str(), prefix: str(), name: str(), expires_at: nullable(dateTime()), created_at: dateTime() }),
          ),
          ...errors(['400', '401', '404', '413', '503']),
        },
      }),
      get: a.op('listApiKeys', "The company's API keys, newest first", false, {
        parameters: a.params,
        responses: { '200': json('Keys.', arr(ref('ApiKey'))), ...errors(['400', '401', '404', '503']) },
      }),
    },
    [`${a.byId}/api-keys/{keyId}/revoke`]: {
      post: a.op('revokeApiKey', 'Revoke an API key (effective on the next request; idempotent)', true, {
        parameters: [keyId],
        responses: { '200': json('The revoked key.', ref('ApiKey')), ...errors(['400', '401', '404', '503']) },
      }),
    },
    [`${a.base}/ingest-tokens`]: {
      post: a.op('createIngestToken', 'Issue an ingest token for a site (the URL is the credential, shown once)', true, {
        description:
          "A portal session needs `keys_tokens`, `bookings` and `credentials` (the URL writes bookings, and a booking's credentials go to the guest address it names). The token records the session.",
        parameters: a.params,
        requestBody: body(fromJoi(createIngestTokenSchema)),
        responses: {
          '201': json(
            'The token and its path on {webhook_url}: in this response only.',
            obj({
              _id: OBJECT_ID_SCHEMA,
              token: str(),
              path: str({ description: '`/webhook/t/<token>`' }),
              site_id: str(),
              provider: str(),
              expires_at: nullable(dateTime()),
            }),
          ),
          ...errors(['400', '401', '404', '413', '503']),
        },
      }),
      get: a.op('listIngestTokens', "The company's ingest tokens, newest first", false, {
        parameters: a.params,
        responses: { '200': json('Tokens.', arr(ref('IngestToken'))), ...errors(['400', '401', '404', '503']) },
      }),
    },
    [`${a.byId}/ingest-tokens/{tokenId}/revoke`]: {
      post: a.op('revokeIngestToken', 'Revoke an ingest token (idempotent)', true, {
        parameters: [tokenId],
        responses: { '200': json('The revoked token.', ref('IngestToken')), ...errors(['400', '401', '404', '503']) },
      }),
    },
    [`${a.base}/callback`]: {
      put: a.op('setCallbackEndpoint', "Set the company's callback URL and its authentication", true, {
        description:
          'hmac: the service generates a signing secret, returned once as `secret`. Only public http(s) addresses are accepted. A portal session needs `callback` and `credentials` (access.provisioned bodies carry credentials).',
        parameters: a.params,
        requestBody: body(fromJoi(callbackEndpointSchema)),
        responses: {
          '200': json(
            'The endpoint, with `secret` when this request generated one (the one time it is shown).',
            obj({ ...callbackEndpoint, secret: str() }, ['secret']),
          ),
          ...errors(['400', '401', '404', '409', '413', '503']),
        },
      }),
      get: a.op('getCallbackEndpoint', "The company's callback endpoint", false, {
        description: "To a portal session without `callback`, every value of the URL's query is masked (`[REDACTED]`).",
        parameters: a.params,
        responses: { '200': json('The endpoint.', ref('CallbackEndpoint')), ...errors(['400', '401', '404', '503']) },
      }),
    },
    [`${a.base}/callback/rotate-secret`]: {
      post: a.op('rotateCallbackSecret', 'Rotate the hmac signing secret', true, {
        description: 'The new secret signs from now on; receivers should accept the previous one until `previous_valid_until`.',
        parameters: a.params,
        responses: {
          '200': json('The new secret (shown once).', obj({ secret: str(), previous_valid_until: dateTime() })),
          ...errors(['400', '401', '404', '409', '503']),
        },
      }),
    },
  };
}

const portalSessionView = obj({
  _id: OBJECT_ID_SCHEMA,
  company_id: nullable(OBJECT_ID_SCHEMA),
  capabilities: arr(oneOf([...PORTAL_CAPABILITIES, PORTAL_ON_CALL])),
  issued_to: nullable(str()),
  link_id: { ...OBJECT_ID_SCHEMA, description: 'The link it was opened with.' },
  created_at: dateTime(),
  expires_at: dateTime(),
  revoked_at: nullable(dateTime()),
});

const portalLinkView = obj({
  _id: OBJECT_ID_SCHEMA,
  company_id: nullable(OBJECT_ID_SCHEMA),
  capabilities: arr(oneOf([...PORTAL_CAPABILITIES, PORTAL_ON_CALL])),
  issued_to: nullable(str()),
  created_at: dateTime(),
  expires_at: dateTime(),
  used_at: nullable(dateTime({ description: 'When it was opened.' })),
  revoked_at: nullable(dateTime()),
});

/** The operator's side of the portal: links for one company, its sessions, revocation. */
function portalLinkPaths(): Record<string, unknown> {
  const errors = (statuses: string[]) => errorResponses('api', statuses);
  return {
    '/admin/v1/companies/{companyId}/portal-links': {
      post: adminOp('Portal', 'createPortalLink', 'Issue a portal link for one company (single use; the token is shown once)', {
        description:
          'Opened once, before `expires_at` (PORTAL_LINK_TTL_MS, an hour by default; `expires_in_seconds` overrides), it becomes a session of PORTAL_SESSION_TTL_MS (12 hours by default) with `capabilities` (`view` always). `{base_url}` + `path` is the link: the token is in its fragment, which browsers do not send to servers.',
        parameters: [companyParam],
        requestBody: body(fromJoi(createPortalLinkSchema), undefined, false),
        responses: {
          '201': json(
            'The link: `token` and `path` are in this response only.',
            obj({
              _id: OBJECT_ID_SCHEMA,
              company_id: OBJECT_ID_SCHEMA,
              token: str(),
              path: str({ description: '`/portal/#/open/<token>`' }),
              capabilities: arr(oneOf(PORTAL_CAPABILITIES)),
              issued_to: nullable(str()),
              expires_at: dateTime(),
              session_ttl_seconds: int(),
            }),
          ),
          ...errors(['400', '401', '404', '413', '503']),
        },
      }),
    },
    '/admin/v1/companies/{companyId}/portal-sessions': {
      get: adminOp('Portal', 'listPortalSessions', "The company's portal sessions, newest first (at most 500)", {
        parameters: [companyParam],
        responses: { '200': json('Sessions.', arr(portalSessionView)), ...errors(['400', '401', '404', '503']) },
      }),
    },
    '/admin/v1/portal-sessions/{sessionId}/revoke': {
      post: adminOp('Portal', 'revokePortalSession', 'Revoke a portal session (its next request is refused; idempotent)', {
        parameters: [pathParam('sessionId', OBJECT_ID_SCHEMA)],
        responses: { '200': json('The revoked session.', portalSessionView), ...errors(['400', '401', '404', '503']) },
      }),
    },
    '/admin/v1/portal-links/{linkId}/revoke': {
      post: adminOp('Portal', 'revokePortalLink', 'Revoke a portal link, opened or not (idempotent)', {
        description:
          'It opens nothing from now on (401 `This portal link has been revoked: ask for a new one`), and the session it opened, if any, is revoked too. Keys and tokens issued in that session stay valid: they name the session (`portal_session_id`); revoke them one by one.',
        parameters: [pathParam('linkId', OBJECT_ID_SCHEMA)],
        responses: { '200': json('The revoked link.', portalLinkView), ...errors(['400', '401', '404', '503']) },
      }),
    },
  };
}

/** `/portal/api/session`: a link exchanged for the session cookie, the session read back, sign-out. */
function portalSessionPaths(): Record<string, unknown> {
  const session = obj({
    session_id: OBJECT_ID_SCHEMA,
    company_id: nullable({ ...OBJECT_ID_SCHEMA, description: "null: an on-call session (every company's dead letters)." }),
    company_name: nullable(str()),
    capabilities: arr(oneOf([...PORTAL_CAPABILITIES, PORTAL_ON_CALL])),
    issued_to: nullable(str({ description: "Who the link was issued to (an on-call session's operator)." })),
    expires_at: dateTime(),
    csrf_token: str({ description: 'Send it as `X-CSRF-Token` on every write of this session.' }),
    webhook_url: nullable(str({ description: "{webhook_url}, where an ingest token's `path` is reached (null: not configured, PORTAL_WEBHOOK_URL)." })),
  });
  return {
    '/portal/api/session': {
      post: {
        tags: ['Portal'],
        operationId: 'openPortalSession',
        summary: 'Open a portal link: its token, once, for the session cookie',
        description: `Sets \`${PORTAL_SESSION_COOKIE}\` (HttpOnly, SameSite=Strict, Path=/portal, Secure outside development). A used, expired, revoked or unknown link is a 401.`,
        requestBody: body(fromJoi(openPortalSessionSchema)),
        responses: {
          '201': json('The session.', session, { headers: { 'Set-Cookie': { description: 'The session cookie.', schema: str() } } }),
          ...portalErrors(['400', '401', '413', '503']),
        },
      },
      get: {
        tags: ['Portal'],
        operationId: 'getPortalSession',
        summary: 'The session: its company, capabilities, expiry and CSRF token',
        security: portalSession,
        responses: { '200': json('The session.', session), ...portalErrors(['401', '403', '503']) },
      },
      delete: {
        tags: ['Portal'],
        operationId: 'closePortalSession',
        summary: 'Sign out: the session is revoked and its cookie cleared',
        security: portalSession,
        parameters: [CSRF_HEADER],
        responses: { '204': { description: 'Signed out.' }, ...portalErrors(['401', '403', '503']) },
      },
    },
  };
}

const lockAccountView = obj({
  _id: OBJECT_ID_SCHEMA,
  company_id: OBJECT_ID_SCHEMA,
  provider: oneOf(LOCK_ACCOUNT_PROVIDERS),
  label: str({ description: 'TTLock: the username; Nuki: the name given.' }),
  status: oneOf(['connected', 'needs_attention'], {
    description: "needs_attention: the vendor refused the account's credentials at its last use (a changed password, a revoked token): give it a new secret.",
  }),
  status_reason: nullable(str()),
  locks_found: int(),
  synced_at: nullable(dateTime()),
  created_at: dateTime(),
  updated_at: dateTime(),
});

const foundLock = obj({
  lock_id: str({ description: "The service's id of the lock (docs/adr/0109)." }),
  name: str(),
  battery: nullable(obj({ percent: nullable(int()), low: bool() })),
  remote: bool({ description: 'The vendor reaches the lock (a gateway, a bridge or Wi-Fi).' }),
  held_elsewhere: bool({ description: "Another company holds it: it is not this company's (the other is not named)." }),
});

/** `/admin/v1/companies/{companyId}/lock-accounts`: the company's vendor accounts and the locks found in them (issue 52). */
function lockAccountPaths(): Record<string, unknown> {
  const tag = 'Lock accounts';
  const errors = (statuses: string[]) =>
    errorResponses('api', statuses, {
      '400': 'Invalid request, or the lock vendor refused the credentials given.',
      '503': 'The lock vendor, the database or location-api cannot be reached now; retry shortly.',
    });
  const accountId = pathParam('accountId', OBJECT_ID_SCHEMA);
  const synced = obj({
    account: lockAccountView,
    locks: arr(foundLock),
    missing: arr(str(), { description: 'Locks the company holds through this account that the vendor no longer lists: kept.' }),
  });
  return {
    '/admin/v1/companies/{companyId}/lock-accounts': {
      post: adminOp(tag, 'connectLockAccount', "Connect a vendor account: its locks become the company's", {
        description:
          "TTLock: the account's username and password under the service's application; Nuki: an API token (Nuki Web → API) and a name. The credentials are checked by listing the account's locks; each lock no company holds becomes the company's, one another company holds is reported (`held_elsewhere`) and never claimed. The secret is sealed at rest and never returned.",
        parameters: [companyParam],
        // Written out (not fromJoi): one object per provider, so the document and the typed client say which fields each takes.
        requestBody: body({
          oneOf: [
            obj({ provider: constant('ttlock'), username: str({ minLength: 1, maxLength: 100 }), password: str({ minLength: 1, maxLength: 512 }) }),
            obj({ provider: constant('nuki'), api_token: str({ minLength: 1, maxLength: 512 }), name: str({ minLength: 1, maxLength: 100 }) }),
          ],
        }),
        responses: {
          '201': json('The account and the locks found in it.', obj({ account: lockAccountView, locks: arr(foundLock) })),
          ...errors(['400', '401', '404', '409', '413', '503']),
        },
      }),
      get: adminOp(tag, 'listLockAccounts', "The company's lock accounts, oldest first", {
        parameters: [companyParam],
        responses: { '200': json('Accounts (never their secrets).', arr(lockAccountView)), ...errors(['400', '401', '404', '503']) },
      }),
    },
    '/portal/api/lock-accounts': {
      get: portalOp('listLockAccounts', "The company's lock accounts and their health (connected or needs_attention), never their secrets", false, {
        responses: { '200': json('Accounts, oldest first.', arr(lockAccountView)), ...errors(['503']) },
      }),
    },
    '/admin/v1/companies/{companyId}/lock-accounts/{accountId}/sync': {
      post: adminOp(tag, 'syncLockAccount', "List the account's locks again", {
        description:
          "New locks become the company's, names and batteries are refreshed. A refusal of the credentials marks the account `needs_attention` (400).",
        parameters: [companyParam, accountId],
        responses: { '200': json('The account, its locks, and those the vendor no longer lists.', synced), ...errors(['400', '401', '404', '503']) },
      }),
    },
    '/admin/v1/companies/{companyId}/lock-accounts/{accountId}/secret': {
      put: adminOp(tag, 'rotateLockAccountSecret', 'Give the account a new secret (TTLock: password; Nuki: API token)', {
        description: 'Checked with the vendor before it replaces the old one: a refused secret changes nothing (400). Then the account is re-synced.',
        parameters: [companyParam, accountId],
        requestBody: body({ oneOf: [obj({ password: str({ minLength: 1, maxLength: 512 }) }), obj({ api_token: str({ minLength: 1, maxLength: 512 }) })] }),
        responses: { '200': json('The account re-synced.', synced), ...errors(['400', '401', '404', '413', '503']) },
      }),
    },
    '/admin/v1/companies/{companyId}/lock-accounts/{accountId}': {
      delete: adminOp(tag, 'disconnectLockAccount', 'Disconnect an account: its locks are released', {
        description: "409 while any of its locks is bound in the company's layout, unless `unbind=true`, which unbinds them first.",
        parameters: [companyParam, accountId, queryParam('unbind', oneOf(['true', 'false']), "true: unbind the account's bound locks, then disconnect.")],
        responses: {
          '200': json(
            'The account disconnected, the locks released and those unbound.',
            obj({ account: lockAccountView, released: arr(str()), unbound: arr(str()) }),
          ),
          ...errors(['400', '401', '404', '409', '503']),
        },
      }),
    },
  };
}

function adminApiPaths(): Record<string, unknown> {
  const tag = 'Administration';
  const errors = (statuses: string[]) => errorResponses('api', statuses);
  return {
    '/admin/v1/keys/current': {
      get: {
        tags: ['Authentication'],
        operationId: 'currentKey',
        summary: 'Which company and key an API key is',
        description: "With the integrator's own `apikey`: a quick check that a key works.",
        security: apiKey,
        parameters: [COMPANY_HEADER, CORRELATION_HEADER],
        responses: {
          '200': json(
            'The key and its company.',
            obj({
              company_id: str(),
              company_name: nullable(str()),
              key_id: str(),
              prefix: nullable(str()),
              name: nullable(str()),
              expires_at: nullable(dateTime()),
            }),
          ),
          ...errors(['401', '403', '503']),
        },
      },
    },
    '/admin/v1/companies': {
      post: adminOp(tag, 'createCompany', 'Create a company', {
        requestBody: body(fromJoi(createCompanySchema)),
        responses: { '201': json('Created.', ref('Company')), ...errors(['400', '401', '413', '503']) },
      }),
      get: adminOp(tag, 'listCompanies', 'Companies, oldest first (`name` finds by exact name)', {
        parameters: queryParamsOf(fromJoi(companyListQuerySchema)),
        responses: { '200': json('Companies.', arr(ref('Company'))), ...errors(['400', '401', '503']) },
      }),
    },
    '/admin/v1/companies/{companyId}': {
      get: adminOp(tag, 'getCompany', 'One company', {
        parameters: [companyParam],
        responses: { '200': json('The company.', ref('Company')), ...errors(['400', '401', '404', '503']) },
      }),
    },
    ...companyIdentityPaths(OPERATOR),
    ...portalLinkPaths(),
    ...lockAccountPaths(),
    '/admin/v1/callback-endpoints/republish': {
      post: adminOp(tag, 'republishCallbackEndpoints', 'Send every endpoint to the dispatcher again (replica re-sync)', {
        responses: { '200': json('Counts.', obj({ republished: int(), failed: int() })), ...errors(['401', '503']) },
      }),
    },
    '/admin/v1/companies/{companyId}/deliveries': {
      get: adminOp('Callback deliveries', 'listDeliveries', "A booking's callback deliveries, with every attempt, and its guest messages", {
        parameters: [pathParam('companyId', str()), queryParam('referenceId', str({ minLength: 1, maxLength: 256 }), undefined, true)],
        responses: {
          '200': json('Deliveries retrieved (code 7080).', deliveriesListing()),
          ...errors(['400', '401', '503']),
        },
      }),
    },
    '/admin/v1/deliveries/{deliveryId}/redeliver': {
      post: adminOp('Callback deliveries', 'redeliver', 'Deliver one callback again', {
        description:
          'Only a failed or dead delivery (409 otherwise), and never an access.provisioned whose credentials a later access.revoked of the booking names (409).',
        parameters: [pathParam('deliveryId', str({ pattern: '^dlv_[0-9a-f]{32}$' }))],
        responses: {
          '202': json('Redelivery queued (code 7081).', envelope(SuccessCodes.REDELIVERY_QUEUED, obj({ deliveryId: str(), status: constant('pending') }))),
          ...errors(['401', '404', '409', '503']),
        },
      }),
    },
    '/admin/v1/companies/{companyId}/deliveries/redeliver-dead': {
      post: adminOp('Callback deliveries', 'redeliverDead', 'Deliver every dead-lettered callback of a company again', {
        description: 'An access.provisioned whose credentials were revoked since stays dead.',
        parameters: [pathParam('companyId', str())],
        responses: {
          '202': json('Redelivery queued (code 7081).', envelope(SuccessCodes.REDELIVERY_QUEUED, obj({ redelivered: int(), deliveryIds: arr(str()) }))),
          ...errors(['400', '401', '503']),
        },
      }),
    },
  };
}

/** `/admin/v1/dead-letters` (admin-api, libs/dead-letters): every dead-letter queue, its messages, replay, purge, their history. */
function deadLetterPaths(): Record<string, unknown> {
  const tag = 'Dead letters';
  const errors = (statuses: string[]) => errorResponses('api', statuses);
  const text = nullable(str());
  const queue = pathParam(
    'queue',
    str({ minLength: 1 }),
    'A consuming queue of the topology (`provisioning-worker.booking-events`) or its dead-letter queue (`….dlq`).',
  );
  const counts = {
    scanned: int(),
    matched: int(),
    replayed: int(),
    statuses_queued: int({ description: 'Booking events set back to QUEUED.' }),
    purged: int(),
  };
  const deadLetter = obj({
    message_id: text,
    event_id: text,
    company_id: text,
    reference_id: text,
    reason: text,
    retry_count: int(),
    failed_queue: text,
    original_exchange: text,
    original_routing_key: text,
    first_failure_at: text,
    dead_lettered_at: nullable(dateTime()),
    age_seconds: nullable(int()),
    correlation_id: text,
    headers: { type: 'object', description: 'Every header of the message.' },
    body: { description: 'The body: its JSON, else its text.' },
  });
  const filter = obj({ company_id: str(), reason: str(), reference_id: str(), older_than: str(), newer_than: str(), ids: arr(str()) }, [
    'company_id',
    'reason',
    'reference_id',
    'older_than',
    'newer_than',
    'ids',
  ]);
  const operation = obj({
    _id: OBJECT_ID_SCHEMA,
    action: oneOf(['replay', 'purge']),
    queue: str(),
    dead_letter_queue: str(),
    operator: str(),
    via: oneOf(['admin-api', 'cli', 'portal']),
    correlation_id: text,
    selection: nullable(obj({ all: bool(), filter })),
    status: oneOf(['running', 'done', 'failed']),
    counts: obj(counts),
    message_ids: arr(str(), { description: 'The first 1000 replayed.' }),
    message_ids_truncated: bool(),
    error: text,
    started_at: dateTime(),
    finished_at: nullable(dateTime()),
  });
  return {
    '/admin/v1/dead-letters': {
      get: adminOp(tag, 'listDeadLetterQueues', 'Every dead-letter queue with its depth and the age of its oldest message', {
        responses: {
          '200': json(
            'One per consuming queue.',
            arr(
              obj({
                queue: str(),
                dead_letter_queue: str(),
                declared: bool(),
                depth: int(),
                oldest_dead_lettered_at: nullable(dateTime()),
                oldest_age_seconds: nullable(int()),
              }),
            ),
          ),
          ...errors(['401', '503']),
        },
      }),
    },
    '/admin/v1/dead-letters/{queue}/messages': {
      get: adminOp(tag, 'listDeadLetters', 'Dead letters of a queue, oldest first, filtered; read and handed back (nothing is taken away)', {
        parameters: [queue, ...queryParamsOf(fromJoi(deadLetterListQuerySchema))],
        responses: {
          '200': json(
            'The dead letters.',
            obj({ queue: str(), dead_letter_queue: str(), depth: int(), scanned: int(), matched: int(), messages: arr(deadLetter) }),
          ),
          ...errors(['400', '401', '404', '503']),
        },
      }),
    },
    '/admin/v1/dead-letters/{queue}/replay': {
      post: adminOp(
        tag,
        'replayDeadLetters',
        'Replay all, ids or a filtered set: back to the work queue with retry_count 0 (booking events QUEUED again); recorded',
        {
          parameters: [queue],
          requestBody: body(fromJoi(deadLetterReplaySchema)),
          responses: {
            '200': json(
              'What was replayed.',
              obj({
                operation_id: OBJECT_ID_SCHEMA,
                queue: str(),
                dead_letter_queue: str(),
                depth: int(),
                remaining: int(),
                ...counts,
                message_ids: arr(str()),
                message_ids_truncated: bool(),
                not_found_ids: arr(str()),
              }),
            ),
            ...errors(['400', '401', '404', '409', '413', '503']),
          },
        },
      ),
    },
    '/admin/v1/dead-letters/{queue}/purge': {
      post: adminOp(tag, 'purgeDeadLetters', "Drop every dead letter of a queue: `confirm` must be the dead-letter queue's name; recorded", {
        parameters: [queue],
        requestBody: body(fromJoi(deadLetterPurgeSchema)),
        responses: {
          '200': json('How many were dropped.', obj({ operation_id: OBJECT_ID_SCHEMA, queue: str(), dead_letter_queue: str(), purged: int() })),
          ...errors(['400', '401', '404', '413', '503']),
        },
      }),
    },
    '/admin/v1/dead-letters/operations': {
      get: adminOp(tag, 'listDeadLetterOperations', 'Every replay and purge, newest first: who, when, what, how many', {
        parameters: queryParamsOf(fromJoi(deadLetterOperationsQuerySchema)),
        responses: { '200': json('The operations.', arr(operation)), ...errors(['400', '401', '404', '503']) },
      }),
    },
    '/admin/v1/dead-letters/operations/{operationId}': {
      get: adminOp(tag, 'getDeadLetterOperation', 'One replay or purge (its counts grow while it runs)', {
        parameters: [pathParam('operationId', str())],
        responses: { '200': json('The operation.', operation), ...errors(['401', '404', '503']) },
      }),
    },
  };
}

/** The OpenAPI 3.1 document of {base_url}: locations, access, employee access, administration, and the callbacks as webhooks. */
export function buildApiDocument(): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const version of ['v4', 'v3'] as const) {
    paths[`/api/${version}/location/all`] = locationRead(version, 'all');
    for (const level of LOCATION_LEVELS) {
      paths[`/api/${version}/location/${PLURAL[level]}`] = locationRead(version, level);
      paths[`/api/${version}/location/${PLURAL[level]}/{id}`] = externalIdPatch(version, level);
    }
    paths[`/api/${version}/location/external-ids`] = externalIdsBulk(version);
  }
  Object.assign(
    paths,
    accessPaths(),
    employeePaths(),
    adminApiPaths(),
    adminLocationPaths(),
    deadLetterPaths(),
    portalSessionPaths(),
    companyIdentityPaths(PORTAL),
  );
  const built = paths as Parameters<typeof onCallDeadLetterPaths>[0];
  Object.assign(
    paths,
    portalDataPaths(),
    portalOverviewPaths(),
    callbackTestPaths(),
    callbackHealthPaths(),
    portalLayoutPaths(built),
    onCallLinkPaths(),
    onCallDeadLetterPaths(built),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Direct booking, location and access API ({base_url})',
      version: '1.0.0',
      description: [
        'Locations, booking access and employee access for a company (`apikey`), the administration of companies, keys, tokens, callbacks and layouts (`Authorization: Bearer <ADMIN_TOKEN>`), and the signed callbacks the service sends (Webhooks).',
        '',
        'Bookings are sent to the ingest host, `{webhook_url}`, whose own reference is at `{webhook_url}/docs`.',
        '',
        'Envelope: `{ message, code, error, data }`; employee access answers `{ success, message, data }` and fails with `{ error, details }`. Every request may be rate limited (429 with `Retry-After`).',
      ].join('\n'),
    },
    servers: [
      { url: '{base_url}', variables: { base_url: { default: 'http://127.0.0.1:8080', description: 'The API host (`npm start` serves it on port 8080).' } } },
    ],
    tags: [
      { name: 'Locations', description: 'The layout of the company: read it, map your own ids.' },
      { name: 'Access', description: 'The credentials of a booking.' },
      { name: 'Employee access', description: 'Access schedules over location rules.' },
      { name: 'Authentication', description: 'Checking an API key.' },
      { name: 'Administration', description: 'Companies, API keys, ingest tokens, callback endpoints (admin token).' },
      { name: 'Layout administration', description: 'Writing the layout (admin token).' },
      { name: 'Lock accounts', description: "A company's vendor accounts (TTLock, Nuki) and the locks found in them (admin token)." },
      { name: 'Callback deliveries', description: 'Callback deliveries and redelivery (admin token).' },
      { name: 'Dead letters', description: 'What is stuck, why; replay and purge, recorded (admin token).' },
      {
        name: 'Portal',
        description:
          "The administration portal (`{base_url}/portal`): links issued by the operator, and the company-scoped routes its session cookie opens, the company always the session's.",
      },
    ],
    paths,
    webhooks,
    components: { schemas, securitySchemes },
  };
}
