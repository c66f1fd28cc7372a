import { canTransition, inTransitionOrder, statusesLeadingTo } from '../index';

describe('event status transitions', () => {
  it('never lets a late PROCESSING overwrite a final status', () => {
    expect(canTransition('COMPLETED', 'PROCESSING')).toBe(false);
    expect(canTransition('DEAD_LETTER', 'PROCESSING')).toBe(false);
  });
  it('follows the SPEC table', () => {
    expect(canTransition('RECEIVED', 'QUEUED')).toBe(true);
    expect(canTransition('RECEIVED', 'FAILED')).toBe(true);
    expect(canTransition('FAILED', 'DEAD_LETTER')).toBe(true);
    expect(canTransition('QUEUED', 'PROCESSING')).toBe(true);
    expect(canTransition('PROCESSING', 'COMPLETED')).toBe(true);
    expect(canTransition('FAILED', 'QUEUED')).toBe(true);
    expect(canTransition('DUPLICATE', 'QUEUED')).toBe(false);
  });
  it('gives the filter for a conditional update', () => {
    expect(statusesLeadingTo('COMPLETED').sort()).toEqual(['PROCESSING', 'QUEUED']);
  });
  describe('a history in the order the event went through it', () => {
    const at = (ms: number) => new Date(Date.UTC(2026, 11, 6, 9, 0, 0, ms));
    const order = (entries: { status: Parameters<typeof canTransition>[0]; at: Date }[]) => inTransitionOrder(entries).map((e) => e.status);
    it('QUEUED before the PROCESSING recorded at the earlier time the run began', () => {
      expect(
        order([
          { status: 'COMPLETED', at: at(90) },
          { status: 'PROCESSING', at: at(10) },
          { status: 'QUEUED', at: at(30) },
        ]),
      ).toEqual(['QUEUED', 'PROCESSING', 'COMPLETED']);
    });
    it('a retried event: each run in its order, runs by time', () => {
      const history = [
        { status: 'QUEUED', at: at(30) },
        { status: 'PROCESSING', at: at(20) },
        { status: 'FAILED', at: at(40) },
        { status: 'QUEUED', at: at(500) },
        { status: 'PROCESSING', at: at(490) },
        { status: 'COMPLETED', at: at(600) },
      ] as const;
      expect(order([...history])).toEqual(['QUEUED', 'PROCESSING', 'FAILED', 'QUEUED', 'PROCESSING', 'COMPLETED']);
    });
    it('an entry no transition leads to (COMPLETED put back over a late write) keeps its place by time', () => {
      expect(
        order([
          { status: 'COMPLETED', at: at(50) },
          { status: 'QUEUED', at: at(10) },
          { status: 'COMPLETED', at: at(70) },
          { status: 'PROCESSING', at: at(5) },
        ]),
      ).toEqual(['QUEUED', 'PROCESSING', 'COMPLETED', 'COMPLETED']);
      // a history that lost its QUEUED entry: by time
      expect(
        order([
          { status: 'COMPLETED', at: at(50) },
          { status: 'PROCESSING', at: at(5) },
        ]),
      ).toEqual(['PROCESSING', 'COMPLETED']);
    });
  });
});
