import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import request from 'supertest';
import { captureLogger, waitFor } from '@smartlock/testing';
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
    ['/admin/v1/companies/abc/callback/test', 'CALLBACK_DISPATCHER_URL'],
    ['/admin/v1/companies/abc/callback', 'ADMIN_API_URL'],
    ['/admin/v1/companies/abc/callback/rotate-secret', 'ADMIN_API_URL'],
    ['/admin/v1/companies/abc/api-keys', 'ADMIN_API_URL'],
    ['/admin/v1/companies', 'ADMIN_API_URL'],
    ['/portal/', 'ADMIN_API_URL'],
    ['/portal/api/session', 'ADMIN_API_URL'],
    ['/portal/api/callback', 'ADMIN_API_URL'],
    ['/portal/api/callback/rotate-secret', 'ADMIN_API_URL'],
    ['/portal/api/dead-letters', 'ADMIN_API_URL'],
    ['/portal/api/events', 'INGEST_GATEWAY_URL'],
    ['/portal/api/events/reference/R1', 'INGEST_GATEWAY_URL'],
    ['/portal/api/bookings/R1/access', 'ACCESS_API_URL'],
    ['/portal/api/deliveries', 'CALLBACK_DISPATCHER_URL'],
    ['/portal/api/callback/test', 'CALLBACK_DISPATCHER_URL'],
    ['/portal/api/layout', 'LOCATION_API_URL'],
    ['/portal/api/layout/import', 'LOCATION_API_URL'],
  ])('%s goes to %s', (path, upstream) => expect(upstreamFor(path)).toBe(upstream));

  it('routes nothing else', () => expect(upstreamFor('/api/v9/other')).toBeUndefined());
});

describe('edge: its own health, readiness and metrics, served as every app serves them', () => {
  it('answers /healthz, /readyz and /metrics (Prometheus text) itself, with no upstream running', async () => {
    const { logger } = captureLogger('edge');
    const edge = await start(readConfig({ PORT: '0', LOCATION_API_URL: 'http://127.0.0.1:1', ADMIN_API_URL: 'http://127.0.0.1:1' }), logger);
    try {
      expect((await request(edge.url).get('/healthz')).body).toEqual({ status: 'ok' });
      expect((await request(edge.url).get('/readyz')).body).toEqual({ status: 'ready', service: 'edge', checks: {} });
      const metrics = await request(edge.url).get('/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.headers['content-type']).toMatch(/^text\/plain;.*version=0\.0\.4/);
      expect(metrics.text).toMatch(/^# HELP process_resident_memory_bytes /m);
      expect(metrics.text).toMatch(/^process_resident_memory_bytes{service="edge"} \d+/m);
    } finally {
      await edge.stop();
    }
  });
});

describe('edge: a graceful stop', () => {
  it('ends within SHUTDOWN_TIMEOUT_MS with a proxied request in hand, whose client sees its connection closed', async () => {
    const held: http.ServerResponse[] = [];
    // An app that takes the request and never answers (a long ?wait=).
    const upstream = http.createServer((_req, res) => void held.push(res));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const { logger, text } = captureLogger('edge');
    const shutdownMs = 600;
    const edge = await start(
      readConfig({ PORT: '0', ACCESS_API_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, SHUTDOWN_TIMEOUT_MS: String(shutdownMs) }),
      logger,
    );
    try {
      const inHand = request(edge.url)
        .get('/api/v4/bookings/R1/access?wait=30')
        .then(
          () => 'answered',
          (err: Error) => err.message,
        );
      await waitFor(() => held.length > 0, { what: 'the request to reach the app' });
      const t0 = Date.now();
      await edge.stop();
      const tookMs = Date.now() - t0;
      expect(tookMs).toBeGreaterThanOrEqual(shutdownMs - 50);
      expect(tookMs).toBeLessThan(shutdownMs + 500);
      expect(await inHand).toMatch(/socket hang up|ECONNRESET/);
      expect(text()).toContain('stopped at the shutdown deadline');
    } finally {
      await edge.stop();
      for (const res of held) res.destroy();
      await new Promise((r) => upstream.close(r));
    }
  });
});

describe('edge proxy', () => {
  it('streams requests to the owning app, and answers 502 in the envelope when it is down', async () => {
    const seen: { method?: string; url?: string; body: string; correlation?: string }[] = [];
    const upstream = http.createServer((req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
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

describe('edge: X-Forwarded-For', () => {
  it("replaces a client's own with the address it connects from; extends a trusted proxy's chain", async () => {
    const seen: (string | undefined)[][] = [];
    const upstream = http.createServer((req, res) => {
      seen.push([req.headers['x-forwarded-for'] as string | undefined, req.headers['x-forwarded-proto'] as string | undefined]);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const { logger } = captureLogger('edge');
    const direct = await start(readConfig({ PORT: '0', ADMIN_API_URL: upstreamUrl }), logger);
    const behindProxy = await start(readConfig({ PORT: '0', ADMIN_API_URL: upstreamUrl, TRUSTED_PROXIES: 'loopback' }), logger);
    try {
      for (const edge of [direct, behindProxy]) {
        expect((await request(edge.url).get('/admin/v1/companies').set('X-Forwarded-For', '203.0.113.16').set('X-Forwarded-Proto', 'https')).status).toBe(200);
        expect((await request(edge.url).get('/admin/v1/companies')).status).toBe(200);
      }
      // This test's client connects over loopback: to the edge it is a client, unless loopback is a trusted proxy.
      expect(seen).toEqual([
        [expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/), undefined],
        [expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/), undefined],
        [expect.stringMatching(/^203\.0\.113\.16, (::ffff:)?127\.0\.0\.1$/), 'https'],
        [expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/), undefined],
      ]);
    } finally {
      await direct.stop();
      await behindProxy.stop();
      upstream.close();
    }
  });
});

describe('edge: an app that answers before the body is read', () => {
  it("passes the answer on and drops the rest of the body: the client's connection serves its next request", async () => {
    // As an app refusing a request unread (a 401): answers at once, before the body is through.
    const upstream = http.createServer((_req, res) => {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":true}');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const { logger } = captureLogger('edge');
    const edge = await start(readConfig({ PORT: '0', LOCATION_API_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` }), logger);
    // One kept-alive connection, as a browser's.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, body: Buffer) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          `${edge.url}/portal/api/layout`,
          { method, agent, timeout: 5000, headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length) } },
          (res) => {
            res.resume().on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
        req.on('error', reject);
        req.end(body);
      });
    try {
      expect(await send('PUT', Buffer.alloc(16 * 1024 * 1024, '{'))).toBe(401);
      // Before, the edge stopped reading the rest of the first body: the connection hung until REQUEST_TIMEOUT_MS.
      expect(await send('GET', Buffer.alloc(0))).toBe(401);
    } finally {
      agent.destroy();
      await edge.stop();
      upstream.close();
    }
  });
});

describe('edge: paths, slow clients and connections', () => {
  let upstream: http.Server;
  let upstreamUrl: string;
  const seen: string[] = [];
  let upstreamConnections = 0;
  let edge: Awaited<ReturnType<typeof start>>;

  beforeAll(async () => {
    // An app as the edge's upstreams are: its /metrics and /readyz exist, but only for the inside.
    upstream = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url === '/metrics') return void res.end('process_cpu_user_seconds_total 1 # INTERNAL');
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ url: req.url }));
    });
    upstream.on('connection', () => upstreamConnections++);
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const { logger } = captureLogger('edge');
    edge = await start(
      readConfig({
        PORT: '0',
        LOCATION_API_URL: upstreamUrl,
        ACCESS_API_URL: upstreamUrl,
        ADMIN_API_URL: upstreamUrl,
        HEADERS_TIMEOUT_MS: '300',
        REQUEST_TIMEOUT_MS: '1000',
        MAX_CONNECTIONS: '4',
      }),
      logger,
    );
  });
  afterAll(async () => {
    await edge.stop();
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  });

  /** A request with its path sent byte for byte (clients like supertest would resolve `..` first). */
  const raw = (path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: edge.port, path, method: 'GET', agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it.each([
    '/api/v3/location/../../../metrics',
    '/api/v3/location/%2e%2e/%2e%2e/%2e%2e/metrics',
    '/api/v3/location/%2E%2E/%2E%2E/%2e%2E/metrics',
    '/api/v3/location/.%2e/.%2E/%2e./metrics',
    '/api/v4/location/..%2f..%2f..%2fmetrics',
    '/api/v4/location/..%5c..%5cmetrics',
    '/api/v4/location/..\\..\\metrics',
    '/api/v4/location/%252e%252e/%252e%252e/metrics',
    '/api/v4/location/./../../readyz',
    '/api/v4/location//../../metrics',
    '/api/v4/location/%zz/metrics',
    '/api/v4/bookings/x/../../../admin/v1/companies/1/booking-events/replay',
  ])('%s is refused with 400 and reaches no app', async (path) => {
    const before = seen.length;
    const res = await raw(path);
    expect({ path, status: res.status }).toEqual({ path, status: 400 });
    expect(JSON.parse(res.body)).toMatchObject({ error: true, code: 4000, message: expect.stringMatching(/^Invalid request path: /) });
    expect(res.body).not.toContain('INTERNAL');
    expect(seen.length).toBe(before);
  });

  it("answers a refused path in its family's envelope: SPEC's employee envelope for employee access", async () => {
    const res = await raw('/api/v3/access/employee/%5Cx');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      error: expect.stringMatching(/^Invalid request path: /),
      details: [{ path: [], message: expect.stringMatching(/^Invalid request path: /) }],
    });
  });

  it("never routes an app's /metrics, /readyz or an admin route the table does not name", async () => {
    for (const path of ['/api/metrics', '/admin/v2/anything', '/metrics/', '/readyz/x']) {
      const res = await raw(path);
      expect({ path, status: res.status, internal: res.body.includes('INTERNAL') }).toEqual({ path, status: 404, internal: false });
    }
    // Its own /metrics and /readyz answer, as every app's do: never an upstream's.
    for (const path of ['/metrics', '/readyz?full=1']) {
      const res = await raw(path);
      expect({ path, status: res.status, internal: res.body.includes('INTERNAL') }).toEqual({ path, status: 200, internal: false });
    }
    expect(seen.filter((u) => /metrics|readyz/.test(u))).toEqual([]);
    // what is routed arrives exactly as sent, encoded bytes included
    expect(JSON.parse((await raw('/api/v4/bookings/A%2FB%20C/access')).body)).toEqual({ url: '/api/v4/bookings/A%2FB%20C/access' });
  });

  it('cuts off a client that trickles its headers, without opening an upstream connection', async () => {
    const before = upstreamConnections;
    const closedAfter = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = net.connect(edge.port, '127.0.0.1', () => socket.write('GET /api/v4/location/all HTTP/1.1\r\nHost: x\r\n'));
      const drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 100);
      socket.on('close', () => {
        clearInterval(drip);
        resolve(Date.now() - started);
      });
      socket.on('error', () => undefined);
    });
    expect(closedAfter).toBeLessThan(5000);
    expect(upstreamConnections).toBe(before);
  });

  it('holds at most MAX_CONNECTIONS connections: one more is closed at once', async () => {
    const open: net.Socket[] = [];
    for (let i = 0; i < 4; i++) {
      const s = net.connect(edge.port, '127.0.0.1');
      s.on('error', () => undefined);
      await new Promise((r) => s.once('connect', r));
      open.push(s);
    }
    await new Promise((r) => setTimeout(r, 50));
    const extra = net.connect(edge.port, '127.0.0.1');
    extra.on('error', () => undefined);
    const closed = await new Promise<boolean>((resolve) => {
      extra.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 2000);
    });
    for (const s of open) s.destroy();
    expect(closed).toBe(true);
  });
});
