import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { captureLogger } from '@smartlock/testing';
import { start } from './app';
import { readConfig } from './config';
import { upstreamFor } from './routes';

describe('edge routing table', () => {
  it.each([
    ['/api/v4/location/all', 'LOCATION_API_URL'],
    ['/api/v3/location/rooms', 'LOCATION_API_URL'],
    ['/api/v4/bookings/R1/access', 'ACCESS_API_URL'],
    ['/api/v3/booking/getLockData/R1', 'ACCESS_API_URL'],
    ['/api/v2/booking/access', 'ACCESS_API_URL'],
    ['/api/v3/access/employee', 'ACCESS_API_URL'],
    ['/admin/v1/companies/abc/layout', 'LOCATION_API_URL'],
    ['/admin/v1/companies/abc/rooms/r1', 'LOCATION_API_URL'],
    ['/admin/v1/companies/abc/occupancy/resync', 'LOCATION_API_URL'],
    ['/admin/v1/companies/abc/deliveries', 'CALLBACK_DISPATCHER_URL'],
    ['/admin/v1/companies/abc/api-keys', 'ADMIN_API_URL'],
    ['/admin/v1/companies', 'ADMIN_API_URL'],
  ])('%s goes to %s', (path, upstream) => expect(upstreamFor(path)).toBe(upstream));

  it('routes nothing else', () => expect(upstreamFor('/api/v9/other')).toBeUndefined());
});

describe('edge proxy', () => {
  it('streams requests to the owning app, and answers 502 in the envelope when it is down', async () => {
    const seen: { method?: string; url?: string; body: string; correlation?: string }[] = [];
    const upstream = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c)).on('end', () => {
        seen.push({ method: req.method, url: req.url, body, correlation: req.headers['x-correlation-id'] as string });
        res.writeHead(201, { 'Content-Type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => upstream.listen(0, r));
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const { logger } = captureLogger('edge');
    const edge = await start(readConfig({ PORT: '0', ADMIN_API_URL: upstreamUrl, LOCATION_API_URL: 'http://127.0.0.1:1' }), logger);
    try {
      const res = await request(edge.url).post('/admin/v1/companies').set('X-Correlation-Id', 'c-9').send({ name: 'Acme' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ ok: true });
      expect(seen).toEqual([{ method: 'POST', url: '/admin/v1/companies', body: '{"name":"Acme"}', correlation: 'c-9' }]);
      const down = await request(edge.url).get('/api/v4/location/all');
      expect(down.status).toBe(502);
      expect(down.body).toEqual({ message: 'Upstream service unavailable; retry shortly', code: 5030, error: true, data: null });
      const unknown = await request(edge.url).get('/nope');
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toBe(true);
    } finally {
      await edge.stop();
      upstream.close();
    }
  });
});
