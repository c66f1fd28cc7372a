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
    confirmedLater: false,
    maxNameLength: null,
    passcodeRule: { pattern: /^\d{4,9}$/, description: 'a custom passcode is 4 to 9 digits' },
  },
  // Nuki Web API (FIELD-NOTES "Nuki Web API"): keypad codes only, kept for any period (ISO dates to
  // the minute), changed in place; app keys are redeemed by invitation e-mail and Nuki has no cards.
  // The service opens a Nuki lock itself (unlock: /smartlock/{id}/action/unlock); a guest's REMOTE
  // credential as TTLock models it (an e-key flag for the vendor's app) has no Nuki counterpart.
  nuki: {
    credentialTypes: ['PASSCODE'],
    customPasscode: true,
    randomPasscode: true,
    changeValidity: { EKEY: false, REMOTE: false, PASSCODE: true, CARD: false },
    remoteUnlockIsEkeyFlag: false,
    remoteNeedsGateway: true,
    passcodeGranularityMs: 60_000,
    maxRandomPasscodePeriodMs: Number.MAX_SAFE_INTEGER,
    // The Web API documents no number of codes per keypad.
    maxPasscodesPerLock: null,
    maxCardsPerLock: 0,
    wireTime: 'iso',
    confirmedLater: true,
    maxNameLength: 32,
    passcodeRule: { pattern: /^(?!12)[1-9]{6}$/, description: 'a Nuki keypad code is 6 digits from 1 to 9, not starting with 12' },
  },
};

/** What the provider can do, without an adapter of it (the worker decides a lock's credentials before it reaches the lock's account). */
export const capabilitiesOf = (provider: LockCloudProvider): LockCapabilities => CAPABILITIES[provider];
