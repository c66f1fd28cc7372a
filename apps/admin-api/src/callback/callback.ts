import type { Request, Router } from 'express';
import { randomBytes } from 'node:crypto';
import { CallbackEndpointChange, CallbackEndpointDoc, StoredCallbackAuth, encryptSecret, hasCapability } from '@smartlock/auth';
import { CallbackAuthInput, PORTAL_ISSUING_NEEDS, callbackEndpointSchema } from '@smartlock/contracts';
import { ConcurrentChangeError, Types } from '@smartlock/db';
import { HttpError, asyncHandler, badRequest, checkDestination, conflict } from '@smartlock/http';
import { redactQuery } from '@smartlock/observability';
import type { Deps } from '../shared/deps';
import type { CompanyScope } from '../shared/scope';
import { validate } from '../shared/validation';
import { liveSecrets, toEndpointConfig, toEndpointView } from './endpoint-view';

/**
 * A signing secret: `whsec_` + 32 random bytes in standard base64, the form the Standard Webhooks
 * libraries decode (they cannot read base64url). Shown once, stored encrypted.
 */
function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Writes a company's endpoint as its next version (the identity store: concurrent changes each make
 * a version of their own, one on top of the other), `build` deciding it at `now` from what it finds;
 * a store that lost to other writers every time is a 409.
 */
async function changeEndpoint(
  deps: Deps,
  companyId: Types.ObjectId,
  build: (current: CallbackEndpointDoc | null, now: Date) => CallbackEndpointChange,
): Promise<{ doc: CallbackEndpointDoc; secret?: string; now: Date }> {
  const now = deps.now();
  const changed = await deps.identity
    .changeCallbackEndpoint(companyId, (current) => build(current, now))
    .catch((err: unknown) => {
      if (err instanceof ConcurrentChangeError) throw conflict('The callback endpoint was changed concurrently; retry');
      throw err;
    });
  return { ...changed, now };
}

function storedAuth(deps: Deps, input: CallbackAuthInput, current: CallbackEndpointDoc | null, now: Date): { auth: StoredCallbackAuth; secret?: string } {
  const enc = (plaintext: string) => encryptSecret(plaintext, deps.secretsKey);
  switch (input.type) {
    case 'hmac': {
      // Already signing with hmac: keep the secrets (receivers hold them); rotate-secret changes them.
      if (current?.auth.type === 'hmac') return { auth: { type: 'hmac', secrets: liveSecrets(current.auth.secrets, now) } };
      const secret = generateSigningSecret();
      return { auth: { type: 'hmac', secrets: [{ secret: enc(secret), created_at: now, valid_until: null }] }, secret };
    }
    case 'bearer':
      return { auth: { type: 'bearer', token: enc(input.token) } };
    case 'basic':
      return { auth: { type: 'basic', username: input.username, password: enc(input.password) } };
    case 'api_key':
      return { auth: { type: 'api_key', header: input.header, value: enc(input.value) } };
  }
}

async function published(deps: Deps, req: Request, type: 'callback.updated' | 'callback.secret_rotated', doc: CallbackEndpointDoc) {
  await deps.events.publish(
    type,
    { company_id: String(doc.company_id), id: String(doc.company_id), data: { endpoint: toEndpointConfig(doc) } },
    { correlationId: req.correlationId, logger: req.log },
  );
}

/** The callback endpoint of the scope's company (the operator's path, or the portal session's): set, read, rotate its secret. */
export function callbackRoutes(router: Router, deps: Deps, scope: CompanyScope): void {
  router.put(
    `${scope.prefix}/callback`,
    ...scope.may('callback', ...PORTAL_ISSUING_NEEDS.callbackUrl),
    asyncHandler(async (req, res) => {
      const company = await scope.company(req);
      const input = validate(callbackEndpointSchema, req.body);
      // Never an address inside our network: the set-time check (delivery checks the address connected to).
      const refused = await checkDestination(input.url, deps.callbackPolicy);
      if (refused) throw badRequest(`url is not allowed: ${refused}`, [{ path: ['url'], message: `url is not allowed: ${refused}` }]);
      const { doc, secret, now } = await changeEndpoint(deps, company._id, (current, at) => ({ url: input.url, ...storedAuth(deps, input.auth, current, at) }));
      await published(deps, req, 'callback.updated', doc);
      // `secret` only when this request generated one: the one time it is shown.
      res.json({ ...toEndpointView(doc, now), ...(secret ? { secret } : {}) });
    }),
  );

  router.get(
    `${scope.prefix}/callback`,
    ...scope.may('view'),
    asyncHandler(async (req, res) => {
      const company = await scope.company(req);
      const doc = await deps.identity.callbackEndpoint(company._id);
      if (!doc) throw new HttpError(404, `Company ${String(company._id)} has no callback endpoint`);
      const view = toEndpointView(doc, deps.now());
      // A query string may carry the receiver's own secret: shown to who may set the URL only.
      res.json(hasCapability(req, 'callback') ? view : { ...view, url: redactQuery(view.url) });
    }),
  );

  router.post(
    `${scope.prefix}/callback/rotate-secret`,
    ...scope.may('callback'),
    asyncHandler(async (req, res) => {
      const company = await scope.company(req);
      let previousValidUntil: Date | undefined;
      const { doc, secret } = await changeEndpoint(deps, company._id, (current, now) => {
        if (!current) throw new HttpError(404, `Company ${String(company._id)} has no callback endpoint`);
        if (current.auth.type !== 'hmac') {
          throw conflict(`The callback endpoint uses ${current.auth.type} authentication; only hmac has a signing secret to rotate`);
        }
        const until = new Date(now.getTime() + deps.callbackSecretOverlapMs);
        previousValidUntil = until;
        const fresh = generateSigningSecret();
        const older = liveSecrets(current.auth.secrets, now).map((s) => (s.valid_until === null ? { ...s, valid_until: until } : s));
        return {
          url: current.url,
          auth: { type: 'hmac', secrets: [{ secret: encryptSecret(fresh, deps.secretsKey), created_at: now, valid_until: null }, ...older] },
          secret: fresh,
        };
      });
      await published(deps, req, 'callback.secret_rotated', doc);
      res.json({ secret, previous_valid_until: previousValidUntil });
    }),
  );
}

/** The operator's re-sync of every company's endpoint (no company scope). */
export function callbackRepublishRoutes(router: Router, deps: Deps): void {
  // Re-sync of the dispatcher's replica: every company's current endpoint again, as callback.updated
  // (replicas keep the highest version, so a message they already have changes nothing).
  router.post(
    '/callback-endpoints/republish',
    asyncHandler(async (req, res) => {
      let republished = 0;
      let failed = 0;
      let reason: string | null = null;
      for await (const doc of deps.identity.everyCallbackEndpoint()) {
        const endpoint = toEndpointConfig(doc);
        const meta = { correlationId: req.correlationId, logger: req.log };
        const error = await deps.events.publish('callback.updated', { company_id: endpoint.company_id, id: endpoint.company_id, data: { endpoint } }, meta);
        if (error === null) republished++;
        else [failed, reason] = [failed + 1, reason ?? error];
      }
      if (failed > 0) {
        const message = `${failed} of ${failed + republished} callback endpoints could not be published (${reason}); retry`;
        throw new HttpError(503, message);
      }
      res.json({ republished, failed });
    }),
  );
}
