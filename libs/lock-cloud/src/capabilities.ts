import { HOUR_MS } from './time';
import type { LockCapabilities, LockCloudProvider } from './types';

/** What each provider can do, so the worker decides "change in place" vs "re-issue" without vendor names. */
export const CAPABILITIES: Readonly<Record<LockCloudProvider, LockCapabilities>> = {
  ttlock: {
    credentialTypes: ['EKEY', 'PASSCODE', 'CARD', 'REMOTE'],
    customPasscode: true,
    randomPasscode: true,
    changeValidity: { EKEY: true, REMOTE: true, PASSCODE: true, CARD: true },
    remoteUnlockIsEkeyFlag: true,
    remoteNeedsGateway: true,
    passcodeGranularityMs: HOUR_MS,
    maxRandomPasscodePeriodMs: 366 * 24 * HOUR_MS,
    maxPasscodesPerLock: 250,
    maxCardsPerLock: 1000,
    wireTime: 'epoch_ms',
  },
};
