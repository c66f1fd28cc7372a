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
export { Types, Schema, isValidObjectId } from 'mongoose';
export type { Connection, Model } from 'mongoose';
