import Joi from 'joi';

const IDENTITY_EVENT_TYPES = [
  'company.created',
  'company.updated',
  'api_key.created',
  'api_key.revoked',
  'ingest_token.created',
  'ingest_token.revoked',
  'callback.updated',
  'callback.secret_rotated',
] as const;
export type IdentityEventType = (typeof IDENTITY_EVENT_TYPES)[number];

/**
 * `identity.events` (fanout): every identity change, so caches drop what they hold and replicas
 * (the dispatcher's callback endpoints) update at once. Never carries a secret in clear; callback
 * secrets travel encrypted exactly as stored.
 */
export interface IdentityEventMessage {
  type: IdentityEventType;
  company_id: string;
  /** id of the key, token or company changed */
  id: string;
  at: string;
  /** type-specific, secret-free details (e.g. the key prefix, the callback configuration with encrypted secrets) */
  data?: Record<string, unknown>;
}

export const identityEventMessageSchema = Joi.object<IdentityEventMessage>({
  type: Joi.string()
    .valid(...IDENTITY_EVENT_TYPES)
    .required(),
  company_id: Joi.string().required(),
  id: Joi.string().required(),
  at: Joi.string().isoDate().required(),
  data: Joi.object().unknown(true),
});
