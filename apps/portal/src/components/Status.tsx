/** A status word with its tone: good (done), bad (failed), wait (in progress), plain (the rest). */
export type Tone = 'good' | 'bad' | 'wait' | 'plain';

const TONES: Record<string, Tone> = {
  COMPLETED: 'good',
  delivered: 'good',
  sent: 'good',
  active: 'good',
  FAILED: 'bad',
  DEAD_LETTER: 'bad',
  dead: 'bad',
  failed: 'bad',
  revoked: 'plain',
  RECEIVED: 'wait',
  QUEUED: 'wait',
  PROCESSING: 'wait',
  pending: 'wait',
};

export const toneOf = (status: string): Tone => TONES[status] ?? 'plain';

/** A status as a badge: the word itself carries the meaning, the colour only repeats it (`tone`: other than the status's own). */
export function Status({ status, label, tone }: { status: string; label?: string; tone?: Tone }) {
  return <span className={`badge tone-${tone ?? toneOf(status)}`}>{label ?? status}</span>;
}
