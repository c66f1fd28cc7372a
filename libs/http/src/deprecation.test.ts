import request from 'supertest';
import { Router } from 'express';
import { createMetrics, createReadiness } from '@smartlock/observability';
import { captureLogger } from '@smartlock/testing';
import { createHttpApp } from './index';

describe('Deprecation and Sunset on the deprecated route families (SPEC Versioning)', () => {
  const app = createHttpApp(
    { logger: captureLogger('deprecation-test').logger, metrics: createMetrics('deprecation-test'), readiness: createReadiness() },
    (a) => {
      const r = Router();
      for (const path of [
        '/api/v2/booking/access',
        '/api/v3/booking/getLockData/:ref',
        '/api/v3/location/all',
        '/api/v4/location/all',
        '/api/v3/access/employee',
      ]) {
        r.get(path, (_req, res) => void res.json({ ok: true }));
      }
      a.use(r);
    },
  );

  it('v2 booking access: deprecated since 2025-01-01, gone after 2027-06-30, successor the v3 lock data of the same booking', async () => {
    const res = await request(app).get('/api/v2/booking/access?ref_id=BK%2F1');
    expect(res.status).toBe(200);
    expect(res.headers.deprecation).toBe(`@${Date.parse('2025-01-01T00:00:00Z') / 1000}`);
    expect(res.headers.sunset).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
    expect(res.headers.link).toBe('</api/v3/booking/getLockData/BK%2F1>; rel="successor-version"');
  });

  it('v3 lock data and v3 locations: deprecated since 2026-07-01, gone after 2028-06-30, each with its v4 successor', async () => {
    const lockData = await request(app).get('/api/v3/booking/getLockData/BK-7');
    expect(lockData.headers).toMatchObject({
      deprecation: `@${Date.parse('2026-07-01T00:00:00Z') / 1000}`,
      sunset: 'Fri, 30 Jun 2028 00:00:00 GMT',
      link: '</api/v4/bookings/BK-7/access>; rel="successor-version"',
    });
    const rooms = await request(app).get('/api/v3/location/all?page=2');
    expect(rooms.headers).toMatchObject({ sunset: 'Fri, 30 Jun 2028 00:00:00 GMT', link: '</api/v4/location/all>; rel="successor-version"' });
  });

  it('on every answer of the family, errors included, and on no other route', async () => {
    const unrouted = await request(app).get('/api/v3/location/rooms');
    expect(unrouted.status).toBe(404);
    expect(unrouted.headers.link).toBe('</api/v4/location/rooms>; rel="successor-version"');
    const noRef = await request(app).get('/api/v2/booking/access');
    expect(noRef.headers.link).toBe('</api/v3/booking/getLockData/{referenceId}>; rel="successor-version"');
    for (const current of ['/api/v4/location/all', '/api/v3/access/employee']) {
      const res = await request(app).get(current);
      expect({ current, deprecation: res.headers.deprecation, sunset: res.headers.sunset }).toEqual({ current, deprecation: undefined, sunset: undefined });
    }
  });
});
