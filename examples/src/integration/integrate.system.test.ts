import { launchSystem, System } from '@smartlock/testing';
import { onboard } from '../test-support/onboard';
import { bookAndRetrieve } from './integrate';

describe('the example integration script against the running system', () => {
  let sys: System;
  beforeAll(async () => {
    sys = await launchSystem();
  }, 180_000);
  afterAll(async () => {
    await sys?.stop();
  });

  it('maps the locations, creates a booking, polls it to COMPLETED and retrieves its credentials', async () => {
    const { api, ingest, token } = await onboard(sys, 'Integration Example Hotel');
    const lines: string[] = [];
    const result = await bookAndRetrieve(
      { api, ingest, token, log: (line) => lines.push(line) },
      { reference_id: 'EXAMPLE-1', check_in: '2027-03-01T15:00:00Z', check_out: '2027-03-03T11:00:00Z', access_type: ['EKEY', 'PASSCODE'] },
      { timeoutMs: 30_000 },
    );
    expect(result.room).toBe('101');
    expect(result.event).toEqual({
      success: true,
      eventId: result.eventId,
      status: 'COMPLETED',
      message: null,
      // What was sent (instants) and what it resolved to in the site's time (an addition to SPEC's answer).
      stay: {
        check_in: '2027-03-01T15:00:00.000Z',
        check_out: '2027-03-03T11:00:00.000Z',
        resolved: { check_in: '2027-03-01T15:00:00.000Z', check_out: '2027-03-03T11:00:00.000Z', time_zone: 'UTC' },
      },
    });
    expect(result.access.status).toBe('active');
    expect(result.access.credentials.map((c) => c.type).sort()).toEqual(['EKEY', 'PASSCODE']);
    expect(lines).toEqual([
      '1. 1 location(s); booking room 101 of site Harbour',
      `2. accepted: event ${result.eventId} (QUEUED)`,
      `3. event ${result.eventId}: COMPLETED`,
      expect.stringMatching(/^4\. (EKEY on lock L-101|PASSCODE on lock L-101: passcode \d{4,9})$/),
      expect.stringMatching(/^4\. (EKEY on lock L-101|PASSCODE on lock L-101: passcode \d{4,9})$/),
    ]);
  });
});
