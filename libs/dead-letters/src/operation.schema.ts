import { Connection, Model, Schema, Types } from '@smartlock/db';
import type { DeadLetterFilter } from './message';

export type OperationAction = 'replay' | 'purge';
export type OperationStatus = 'running' | 'done' | 'failed';

/** Who asked: the admin API (its `operator` field), the CLI (`--operator`, else user@host), or an on-call portal session (its `issued_to`). */
export interface Actor {
  operator: string;
  via: 'admin-api' | 'cli' | 'portal';
  correlation_id?: string | null;
}

export interface OperationCounts {
  /** Dead letters read from the queue. */
  scanned: number;
  /** Of those, the ones the selection chose. */
  matched: number;
  replayed: number;
  /** Booking events whose status was set back to QUEUED. */
  statuses_queued: number;
  purged: number;
}

/** One replay or purge (collection `dead_letter_operations`): who, when, what, how many. */
export interface OperationDoc {
  _id: Types.ObjectId;
  action: OperationAction;
  queue: string;
  dead_letter_queue: string;
  operator: string;
  via: Actor['via'];
  correlation_id: string | null;
  /** What was chosen: every message, or the filter (ids included). null for a purge. */
  selection: { all: boolean; filter: DeadLetterFilter } | null;
  status: OperationStatus;
  /** Updated after every batch while `running`: the progress of a long replay. */
  counts: OperationCounts;
  /** The message (or event) ids replayed, the first MAX_RECORDED_IDS of them. */
  message_ids: string[];
  message_ids_truncated: boolean;
  error: string | null;
  started_at: Date;
  finished_at: Date | null;
}

/** Bounds the document (FerretDB stores it as one PostgreSQL row); the counts stay exact. */
export const MAX_RECORDED_IDS = 1000;

const schema = new Schema<OperationDoc>(
  {
    action: { type: String, required: true, enum: ['replay', 'purge'] },
    queue: { type: String, required: true },
    dead_letter_queue: { type: String, required: true },
    operator: { type: String, required: true },
    via: { type: String, required: true, enum: ['admin-api', 'cli', 'portal'] },
    correlation_id: { type: String, default: null },
    selection: { type: Schema.Types.Mixed, default: null },
    status: { type: String, required: true, enum: ['running', 'done', 'failed'] },
    counts: { type: Schema.Types.Mixed, required: true },
    message_ids: { type: [String], default: [] },
    message_ids_truncated: { type: Boolean, default: false },
    error: { type: String, default: null },
    started_at: { type: Date, required: true },
    finished_at: { type: Date, default: null },
  },
  // minimize off: a replay of `all` keeps its empty filter (`selection: { all: true, filter: {} }`), as the API documents it.
  { versionKey: false, minimize: false },
);
// The history, newest first (GET /admin/v1/dead-letters/operations, `dlq history`).
schema.index({ started_at: -1 });
// The history of one queue (`?queue=`), newest first.
schema.index({ queue: 1, started_at: -1 });

export type OperationModel = Model<OperationDoc>;

export function operationModel(conn: Connection): OperationModel {
  return (conn.models.DeadLetterOperation as OperationModel | undefined) ?? conn.model<OperationDoc>('DeadLetterOperation', schema, 'dead_letter_operations');
}

export interface OperationView {
  _id: string;
  action: OperationAction;
  queue: string;
  dead_letter_queue: string;
  operator: string;
  via: Actor['via'];
  correlation_id: string | null;
  selection: OperationDoc['selection'];
  status: OperationStatus;
  counts: OperationCounts;
  message_ids: string[];
  message_ids_truncated: boolean;
  error: string | null;
  started_at: string;
  finished_at: string | null;
}

export const operationView = (d: OperationDoc): OperationView => ({
  _id: String(d._id),
  action: d.action,
  queue: d.queue,
  dead_letter_queue: d.dead_letter_queue,
  operator: d.operator,
  via: d.via,
  correlation_id: d.correlation_id ?? null,
  selection: d.selection ?? null,
  status: d.status,
  counts: d.counts,
  message_ids: d.message_ids ?? [],
  message_ids_truncated: !!d.message_ids_truncated,
  error: d.error ?? null,
  started_at: new Date(d.started_at).toISOString(),
  finished_at: d.finished_at ? new Date(d.finished_at).toISOString() : null,
});
