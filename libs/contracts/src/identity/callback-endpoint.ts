/** AES-256-GCM ciphertext of a secret, as stored at rest and carried on identity.events (base64 fields). */
export interface EncryptedSecret {
  iv: string;
  tag: string;
  ciphertext: string;
}

export type CallbackAuthType = 'hmac' | 'bearer' | 'basic' | 'api_key';

/**
 * A company's callback endpoint, as admin-api stores it and publishes it (`callback.updated` and
 * `callback.secret_rotated` on identity.events, in `data.endpoint`). Secrets stay encrypted with the
 * shared `SECRETS_KEY`; the dispatcher decrypts them only to sign or authenticate a delivery.
 * `version` grows with every change: a replica keeps the highest it has seen.
 */
export interface CallbackEndpointConfig {
  company_id: string;
  url: string;
  version: number;
  updated_at: string;
  auth:
    | {
        type: 'hmac';
        /** Newest first: secrets[0] signs; older ones are listed while `valid_until` is in the future. */
        secrets: { secret: EncryptedSecret; created_at: string; valid_until: string | null }[];
      }
    | { type: 'bearer'; token: EncryptedSecret }
    | { type: 'basic'; username: string; password: EncryptedSecret }
    | { type: 'api_key'; header: string; value: EncryptedSecret };
}
