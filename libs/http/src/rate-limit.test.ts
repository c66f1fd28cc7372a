import request from 'supertest';
import { Router } from 'express';
import { createMetrics, createReadiness } from '@smartlock/observability';
import { captureLogger } from '@smartlock/testing';
import { apiEnvelope, createHttpApp, ingestEnvelope, rateLimiter, unauthorized } from './index';

function build(limits = { instances: 1, apiKeyPerMin: 3, ingestTokenPerMin: 2, authFailuresPerMin: 2 }) {
  const { logger } = captureLogger('rate-test');
  return createHttpApp(
    { logger, metrics: createMetrics('rate-test'), readiness: createReadiness(), rateLimits: limits, envelope: (req) => (req.path.toLowerCase().startsWith('/webhook') ? ingestEnvelope : apiEnvelope) },
    (app) => {
      const r = Router();
      r.get('/api/thing', (req, res) => {
        if (req.headers.apikey === 'bad') throw unauthorized('API key is invalid');
        res.json({ ok: true });
      });
      r.post('/webhook/t/:token', (_req, res) => void res.status(202).json({ success: true }));
      app.use(r);
    },
  );
}

describe('rate limits (libs/http)', () => {
  it('every limited response carries RateLimit-Policy and RateLimit; over the limit a 429 in the route envelope with Retry-After', async () => {
    const app = build();
    for (let i = 0; i < 3; i++) {
      const ok = await request(app).get('/api/thing').set('apikey', 'key-A');
      expect(ok.status).toBe(200);
      expect(ok.headers['ratelimit-policy']).toBe('"api-key";q=3;w=60');
      expect(ok.headers.ratelimit).toMatch(new RegExp(`^"api-key";r=${2 - i};t=\\d+$`));
    }
    const over = await request(app).get('/api/thing').set('apikey', 'key-A');
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ message: expect.stringContaining('Too many requests'), code: 4290, error: true, data: null });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(over.headers.ratelimit).toMatch(/^"api-key";r=0;t=\d+$/);
    // another key (another company's integration) is not affected
    expect((await request(app).get('/api/thing').set('apikey', 'key-B')).status).toBe(200);
  });

  it('limits each ingest token, answering in the ingest envelope, whatever the path case', async () => {
    const app = build();
    expect((await request(app).post('/webhook/t/tok1').send({})).status).toBe(202);
    expect((await request(app).post('/WEBHOOK/T/tok1').send({})).status).toBe(202);
    const over = await request(app).post('/webhook/t/tok1').send({});
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ success: false, errors: [expect.stringContaining('Too many requests')], message: expect.any(String) });
    expect((await request(app).post('/webhook/t/tok2').send({})).status).toBe(202);
  });

  it('counts failed authentications per client address and refuses the address once over', async () => {
    const app = build();
    for (let i = 0; i < 2; i++) expect((await request(app).get('/api/thing').set('apikey', 'bad')).status).toBe(401);
    const refused = await request(app).get('/api/thing').set('apikey', 'bad');
    expect(refused.status).toBe(429);
    // the address is refused before its key is looked at, even a good one
    expect((await request(app).get('/api/thing').set('apikey', 'key-C')).status).toBe(429);
  });

  it('shares a limit between instances: each allows its part', async () => {
    expect(rateLimiter({ name: 'x', limit: 100, windowS: 60, instances: 3 }).points).toBe(34);
    const limit = rateLimiter({ name: 'guest', limit: 2, windowS: 60, instances: 1 });
    expect([await limit.take('co-1'), await limit.take('co-1'), await limit.take('co-1'), await limit.take('co-2')]).toEqual([true, true, false, true]);
  });
});
