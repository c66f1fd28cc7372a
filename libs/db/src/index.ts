export {
  connectDb,
  isDbReady,
  ensureIndexes,
  isUnavailableError,
  isDuplicateKeyError,
  safeMongoUrl,
  DatabaseUnavailableError,
} from './connection';
export type { DbOptions } from './connection';
export { basePlugin, toPlain } from './plugins';
export { byId } from './filters';
export { Types, Schema, isValidObjectId } from 'mongoose';
export type { Connection, Model } from 'mongoose';
export { claimEach, claimExpiring, claimOnce, compareAndSet, insertUnlessHeld, releaseClaim, unlessHeld, updateAsOwner } from './claims';
export { transitionModel, transitionOnce } from './transitions';
export { insertOnce, recordWriter } from './group-commit';
export { freshReads } from './fresh-reads';
export { ConcurrentChangeError, nextVersion, versionModel } from './versions';
export type { NextVersionOptions, VersionDoc, VersionedStore } from './versions';
export { transientWriteError, withRetries } from './retry';
export type { RetryPolicy } from './retry';
export { boundedCache } from './cache';
