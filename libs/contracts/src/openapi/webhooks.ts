import { ACCESS_TYPES } from '../booking/actions';
import { CALLBACK_HEADERS } from '../callbacks/callback-body';
import { AccessEventTypes } from '../exchanges';
import { LOCK_ACCOUNT_PROVIDERS } from '../identity/admin.requests';
import { body } from './components';
import { JsonSchema, arr, constant, dateTime, int, nullable, obj, oneOf, ref, str } from './schema';

/**
 * Documented additions of issue 52 (ADR 0109), in the callbacks and the v4, v3 and v2 reads: the
 * vendor of a credential's lock, and TTLock's fields null on another vendor's lock.
 */
export const LOCK_PROVIDER = oneOf(LOCK_ACCOUNT_PROVIDERS, {
  description:
    "An addition to SPEC's fields: the vendor of the credential's lock, from its id (`nuki:<id>` is Nuki's; an id without a provider prefix is TTLock's), which says whose vocabulary the fields are in; a Nuki PASSCODE is a code for that lock's keypad. Not the booking's `provider` (v2's query parameter).",
});
export const NOT_TTLOCK = 'null on a lock whose `lockProvider` is not `ttlock`, where the field has no meaning';
export const LOCK_MAC = nullable(str({ description: `The lock's MAC address (TTLock); ${NOT_TTLOCK}.` }));

export const webhookSchemas: Record<string, JsonSchema> = {
  CallbackCredential: obj(
    {
      type: oneOf(ACCESS_TYPES),
      lockId: str(),
      lockMac: LOCK_MAC,
      lockLocationType: oneOf(['door', 'cabinet']),
      siteId: str(),
      siteName: str(),
      roomId: nullable(str()),
      roomNumber: nullable(str({ description: "null for a cabinet, as in SPEC's v2 record" })),
      roomName: nullable(str({ description: "The room's name, for a cabinet too." })),
      bedId: nullable(str()),
      bedNumber: nullable(str()),
      validFrom: dateTime(),
      validTo: dateTime(),
      keyId: int(),
      lockData: str(),
      passcode: str(),
      passcodeId: int(),
      cardNumber: str(),
      cardId: int(),
      lockProvider: LOCK_PROVIDER,
    },
    ['keyId', 'lockData', 'passcode', 'passcodeId', 'cardNumber', 'cardId'],
    {
      description:
        "EKEY and REMOTE: keyId, lockData. PASSCODE: passcode, passcodeId. CARD: cardNumber (the booking's card_id), cardId. In access.revoked no secret: keyId, passcodeId or cardId name the credential; lockData, passcode and cardNumber are absent.",
    },
  ),
  CallbackBody: obj(
    {
      event: oneOf(AccessEventTypes, { description: 'Also in the X-Service-Event header.' }),
      referenceId: str({ description: "The booking's reference_id: with `event`, the receiver's idempotency pair." }),
      eventId: str({ description: 'The ingest event that led to this change.' }),
      deliveryId: str({ description: 'The same on every retry of one delivery.' }),
      occurredAt: dateTime(),
      data: {
        oneOf: [
          obj({ credentials: arr(ref('CallbackCredential')), validity: nullable(obj({ checkIn: str(), checkOut: str() })) }, [], {
            description: 'access.provisioned, access.revoked',
          }),
          obj({ reason: str() }, [], { description: 'access.failed' }),
        ],
      },
    },
    [],
    { description: 'The exact bytes of one delivery never change between retries.' },
  ),
};

const MEANING: Record<(typeof AccessEventTypes)[number], string> = {
  'access.provisioned': 'Access granted: the credentials, ready to hand to the guest.',
  'access.revoked': 'Access revoked (cancel, checkout, a changed booking): the credentials that no longer open, named by their ids, without their secrets.',
  'access.failed': 'Access could not be provisioned: the reason.',
};

const header = (description: string, schema: JsonSchema, required = true) => ({ in: 'header', required, description, schema });

/** The callbacks the service POSTs to the company's callback URL, one per access event type. */
export const webhooks = Object.fromEntries(
  AccessEventTypes.map((event) => [
    event,
    {
      post: {
        operationId: `callback_${event.replace('.', '_')}`,
        summary: MEANING[event],
        description: [
          'Sent to the URL set with `PUT /admin/v1/companies/{companyId}/callback`. With hmac authentication:',
          '',
          `1. \`${CALLBACK_HEADERS.signature}\` = hex HMAC-SHA256(secret, raw body bytes). Verify it over the exact bytes received, before parsing, with a constant-time comparison.`,
          `2. \`${CALLBACK_HEADERS.timestamp}\` (unix seconds) and \`${CALLBACK_HEADERS.signatureV2}\` = hex HMAC-SHA256(secret, \`<timestamp>.<raw body>\`), for receivers that refuse replays.`,
          '3. During a secret rotation accept a signature by the new or the previous secret.',
          '',
          `Beside them, the [Standard Webhooks](https://www.standardwebhooks.com) headers, which the \`standardwebhooks\` library of each language verifies with the same secret as shown (\`whsec_<base64>\`), refusing a timestamp more than 5 minutes away: \`${CALLBACK_HEADERS.webhookId}\` (the delivery's id, the same on every attempt), \`${CALLBACK_HEADERS.webhookTimestamp}\` (unix seconds of the attempt) and \`${CALLBACK_HEADERS.webhookSignature}\`: \`v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<raw body>")>\`, the key being the bytes the secret's base64 part decodes to, one signature per secret valid at the attempt (newest first, space-separated), so during a rotation a receiver holding either secret verifies. A secret issued before standard base64 is base64url: replace \`-\` with \`+\` and \`_\` with \`/\` (or rotate) before handing it to a library.`,
          '',
          'Other strategies send `Authorization: Bearer`, `Authorization: Basic` or a static API-key header instead. Reply 2xx only after durably recording the event; anything else is retried (a 429 or 503 with `Retry-After` no sooner than it asks, within the retry schedule). `410 Gone` disables the endpoint: its deliveries are kept and sent again when it is enabled (`…/callback/enable`). Deliveries can repeat: granting granted access or revoking revoked access is a no-op.',
        ].join('\n'),
        parameters: [
          { name: CALLBACK_HEADERS.signature, ...header('hex HMAC-SHA256 of the raw body (hmac only).', str({ pattern: '^[0-9a-f]{64}$' }), false) },
          { name: CALLBACK_HEADERS.event, ...header('The event type.', constant(event)) },
          { name: CALLBACK_HEADERS.timestamp, ...header('Unix seconds of this attempt (hmac only).', str({ pattern: '^[0-9]+$' }), false) },
          {
            name: CALLBACK_HEADERS.signatureV2,
            ...header('hex HMAC-SHA256 of `<timestamp>.<raw body>` (hmac only).', str({ pattern: '^[0-9a-f]{64}$' }), false),
          },
          {
            name: CALLBACK_HEADERS.webhookId,
            ...header(
              "Standard Webhooks message id: the delivery's `deliveryId`, the same on every attempt (hmac only).",
              str({ pattern: '^dlv_[0-9a-f]{32}$' }),
              false,
            ),
          },
          {
            name: CALLBACK_HEADERS.webhookTimestamp,
            ...header('Standard Webhooks timestamp: unix seconds of this attempt (hmac only).', str({ pattern: '^[0-9]+$' }), false),
          },
          {
            name: CALLBACK_HEADERS.webhookSignature,
            ...header(
              'Standard Webhooks signatures: `v1,<base64>` per secret valid at the attempt, newest first, space-separated (hmac only).',
              str({ pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$' }),
              false,
            ),
          },
        ],
        requestBody: body({ allOf: [{ $ref: '#/components/schemas/CallbackBody' }], properties: { event: constant(event) } }),
        responses: {
          '2XX': { description: 'Recorded: the delivery is done.' },
          '410': { description: 'Gone: the endpoint is disabled (see `…/callback/health`); its deliveries are kept for `…/callback/enable`.' },
          default: { description: 'Not recorded: the delivery is retried (after `Retry-After` on a 429 or 503).' },
        },
      },
    },
  ]),
);
