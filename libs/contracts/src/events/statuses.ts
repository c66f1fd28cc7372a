export const EVENT_STATUSES = ['RECEIVED', 'QUEUED', 'PROCESSING', 'COMPLETED', 'FAILED', 'DEAD_LETTER', 'DUPLICATE'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/**
 * Allowed transitions of an event record (SPEC "States and transitions"), as data so the gateway
 * applies worker reports monotonically: a late PROCESSING never overwrites COMPLETED.
 * QUEUED -> COMPLETED is allowed because a fast worker's PROCESSING report may arrive after its
 * COMPLETED report. FAILED and DEAD_LETTER go back to QUEUED only through a retry or a replay.
 */
const TRANSITIONS: Readonly<Record<EventStatus, readonly EventStatus[]>> = {
  RECEIVED: ['QUEUED', 'FAILED', 'DEAD_LETTER'],
  QUEUED: ['PROCESSING', 'COMPLETED', 'FAILED', 'DEAD_LETTER'],
  PROCESSING: ['PROCESSING', 'COMPLETED', 'FAILED', 'DEAD_LETTER'],
  FAILED: ['QUEUED', 'FAILED', 'DEAD_LETTER'],
  DEAD_LETTER: ['QUEUED'],
  COMPLETED: [],
  DUPLICATE: [],
};

export function canTransition(from: EventStatus, to: EventStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The statuses from which a status `to` may be entered: the filter of a conditional update. */
export function statusesLeadingTo(to: EventStatus): EventStatus[] {
  return EVENT_STATUSES.filter((from) => TRANSITIONS[from].includes(to));
}

/**
 * An event's status history in the order the event went through it: from `start` (RECEIVED, the
 * record's receipt), each next entry is the earliest one the state machine allows from the status
 * before it (TRANSITIONS), so QUEUED comes before the PROCESSING a worker reports at the time its run
 * began, whichever was recorded first, and whatever the worker's clock said. An entry no transition
 * leads to (a status put back over a late write, an entry lost) takes its place by time.
 */
export function inTransitionOrder<T extends { status: EventStatus; at: Date | string }>(entries: readonly T[], start: EventStatus = 'RECEIVED'): T[] {
  const left = [...entries].sort((a, b) => new Date(a.at).getTime() - new Date(b.at).getTime());
  const ordered: T[] = [];
  let current = start;
  while (left.length > 0) {
    const next = Math.max(
      0,
      left.findIndex((e) => canTransition(current, e.status)),
    );
    const [entry] = left.splice(next, 1);
    ordered.push(entry);
    current = entry.status;
  }
  return ordered;
}

/** SPEC Limits: processing retries, then DEAD_LETTER. */
export const MAX_RETRIES = 3;
/** SPEC Limits: duplicate window on ingest. */
export const DUPLICATE_WINDOW_MS = 60_000;
