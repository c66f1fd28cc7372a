import request from 'supertest';
import { Router } from 'express';
import { createMetrics, createReadiness } from '@smartlock/observability';
import { captureLogger } from '@smartlock/testing';
import { apiEnvelope, createHttpApp, ingestEnvelope, rateLimiter, unauthorized } from './index';

const LIMITS = { instances: 1, apiKeyPerMin: 3, ingestTokenPerMin: 2, authFailuresPerMin: 2, portalSessionPerMin: 2, trustedProxies: '' };

function build(limits = LIMITS) {
  const { logger } = captureLogger('rate-test');
  return createHttpApp(
    {
      logger,
      metrics: createMetrics('rate-test'),
      readiness: createReadiness(),
      rateLimits: limits,
      envelope: (req) => (req.path.toLowerCase().startsWith('/webhook') ? ingestEnvelope : apiEnvelope),
    },
    (app) => {
      const r = Router();
      r.get('/api/thing', (req, res) => {
        if (req.headers.apikey === 'bad') throw unauthorized('API key is invalid');
        res.json({ ok: true });
      });
      r.post('/webhook/t/:token', (_req, res) => void res.status(202).json({ success: true }));
      r.get('/portal/api/thing', (_req, res) => void res.json({ ok: true }));
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

  it('limits each ingest token, answering in the ingest envelope, whatever the path case or escapes', async () => {
    const app = build();
    expect((await request(app).post('/webhook/t/tok1').send({})).status).toBe(202);
    // `%74` is `t`: the token the route reads, in the same bucket (issue 46: a fresh one per spelling)
    expect((await request(app).post('/WEBHOOK/T/%74ok%31').send({})).status).toBe(202);
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

  it('limits each portal session by its cookie', async () => {
    const app = build();
    for (let i = 0; i < 2; i++) expect((await request(app).get('/portal/api/thing').set('Cookie', 'theme=dark; portal_session=s1')).status).toBe(200);
    const over = await request(app).get('/portal/api/thing').set('Cookie', 'portal_session= s1 ');
    expect(over.status).toBe(429);
    expect(over.headers.ratelimit).toMatch(/^"portal-session";r=0;t=\d+$/);
    expect((await request(app).get('/portal/api/thing').set('Cookie', 'portal_session=s2')).status).toBe(200);
  });

  it('believes X-Forwarded-For only from TRUSTED_PROXIES, and counts IPv6 clients by /64', async () => {
    // No proxy trusted: a made-up X-Forwarded-For is not the client, the socket's address is.
    const direct = build();
    for (const forged of ['203.0.113.16', '203.0.113.17'])
      expect((await request(direct).get('/api/thing').set('X-Forwarded-For', forged).set('apikey', 'bad')).status).toBe(401);
    expect((await request(direct).get('/api/thing').set('X-Forwarded-For', '203.0.113.18').set('apikey', 'key-D')).status).toBe(429);

    // Behind a proxy on loopback (this test's client): the address it adds is the client's.
    const proxied = build({ ...LIMITS, trustedProxies: 'loopback' });
    const from = (xff: string) => request(proxied).get('/api/thing').set('X-Forwarded-For', xff);
    expect((await from('2001:db8:1:2::1').set('apikey', 'bad')).status).toBe(401);
    expect((await from('2001:db8:1:2:ffff:ffff:ffff:ffff').set('apikey', 'bad')).status).toBe(401);
    expect((await from('2001:db8:1:2::7').set('apikey', 'key-E')).status).toBe(429); // the same /64
    expect((await from('2001:db8:1:3::1').set('apikey', 'key-E')).status).toBe(200);
    // One IPv4 address however written (a fresh app: the key `bad` has its own limit of 3).
    const v4 = build({ ...LIMITS, trustedProxies: 'loopback' });
    expect((await request(v4).get('/api/thing').set('X-Forwarded-For', '::ffff:198.51.100.1').set('apikey', 'bad')).status).toBe(401);
    expect((await request(v4).get('/api/thing').set('X-Forwarded-For', '198.51.100.1').set('apikey', 'bad')).status).toBe(401);
    expect((await request(v4).get('/api/thing').set('X-Forwarded-For', '198.51.100.1').set('apikey', 'key-F')).status).toBe(429);
  });

  it('shares a limit between instances: each allows its part', async () => {
    expect(rateLimiter({ name: 'x', limit: 100, windowS: 60, instances: 3 }).points).toBe(34);
    const limit = rateLimiter({ name: 'guest', limit: 2, windowS: 60, instances: 1 });
    expect([await limit.take('co-1'), await limit.take('co-1'), await limit.take('co-1'), await limit.take('co-2')]).toEqual([true, true, false, true]);
  });
});
