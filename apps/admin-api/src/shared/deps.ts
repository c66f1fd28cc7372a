import type { Auth, IdentityStore, SecretKey } from '@smartlock/auth';
import type { OutboundPolicy } from '@smartlock/http';
import type { Logger } from '@smartlock/observability';
import type { IdentityEvents } from './identity-events';

/** What the use cases of admin-api share: the identity slice, the event publisher, configuration. */
export interface Deps {
  /** Every read and write of the identity slice (libs/auth identityStore). */
  identity: IdentityStore;
  auth: Auth;
  events: IdentityEvents;
  logger: Logger;
  /** SECRETS_KEY, parsed: encrypts callback secrets at rest. */
  secretsKey: SecretKey;
  callbackSecretOverlapMs: number;
  /** Where callback URLs may point (public addresses; loopback and http in development). */
  callbackPolicy: OutboundPolicy;
  /** The `_id` of the company's site given by `_id` or external id, null if it has none such (location-api). */
  siteOf: (companyId: string, site: string) => Promise<string | null>;
  now: () => Date;
  /** Portal links and sessions (PORTAL_* configuration). */
  portal: { linkTtlMs: number; sessionTtlMs: number; cookieSecure: boolean; webhookUrl: string };
}
