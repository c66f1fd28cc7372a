export { createDeadLetters } from './dead-letters';
export type {
  DeadLetters,
  DeadLettersOptions,
  DeadLetterQueueView,
  DeadLetterListing,
  ReplaySelection,
  ReplayResult,
  PurgeResult,
  Progress,
  OperationQuery,
} from './dead-letters';
export { DeadLetterError } from './errors';
export type { DeadLetterErrorKind } from './errors';
export type { DeadLetterFilter, DeadLetterView } from './message';
export { operationModel } from './operation.schema';
export type { Actor, OperationAction, OperationCounts, OperationView } from './operation.schema';
