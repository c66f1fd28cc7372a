import type { Logger, Registry } from '@smartlock/observability';
import { LockAccountSecret, LockCloudEnv, NUKI_CONFIRM_DEFAULTS, NukiEnv } from './config';
import { createNukiLockCloud } from './nuki/adapter';
import { createTtlockLockCloud } from './ttlock/adapter';
import type { LockCloud } from './types';

/** The adapter of one lock account: the provider's, signed in with the account's own secret. */
export function accountLockCloud(
  secret: LockAccountSecret,
  env: Pick<LockCloudEnv, 'LOCK_CLOUD_URL' | 'LOCK_CLOUD_CLIENT_ID' | 'LOCK_CLOUD_CLIENT_SECRET' | 'LOCK_CLOUD_TIMEOUT_MS'> & NukiEnv,
  opts: { logger?: Logger; metrics?: Registry; confirm?: { timeoutMs: number; pollMs: number } } = {},
): LockCloud {
  if (secret.provider === 'nuki') {
    const confirm = opts.confirm ?? NUKI_CONFIRM_DEFAULTS;
    return createNukiLockCloud(
      {
        baseUrl: env.NUKI_API_URL,
        apiToken: secret.api_token,
        timeoutMs: env.LOCK_CLOUD_TIMEOUT_MS,
        confirmTimeoutMs: confirm.timeoutMs,
        confirmPollMs: confirm.pollMs,
      },
      opts,
    );
  }
  return createTtlockLockCloud(
    {
      baseUrl: env.LOCK_CLOUD_URL,
      clientId: env.LOCK_CLOUD_CLIENT_ID,
      clientSecret: env.LOCK_CLOUD_CLIENT_SECRET,
      username: secret.username,
      password: secret.password,
      timeoutMs: env.LOCK_CLOUD_TIMEOUT_MS,
    },
    opts,
  );
}
