import { canTransition, statusesLeadingTo } from '../index';

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
});
