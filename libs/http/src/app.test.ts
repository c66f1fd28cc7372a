import request from 'supertest';
import { gzipSync } from 'node:zlib';
import express, { Router } from 'express';
import { createMetrics, createReadiness } from '@smartlock/observability';
import { captureLogger } from '@smartlock/testing';
import { asyncHandler, createHttpApp, ingestEnvelope, apiEnvelope, badRequest } from './index';

function build(ready = true, extra: { largeBodies?: Parameters<typeof createHttpApp>[0]['largeBodies']; service?: string } = {}) {
  const { logger, text } = captureLogger('http-test');
  const readiness = createReadiness();
  readiness.add('database', () => ready);
  const app = createHttpApp(
    {
      logger,
      metrics: createMetrics('http-test'),
      readiness,
      envelope: (req) => (req.path.startsWith('/webhook') ? ingestEnvelope : apiEnvelope),
      ...extra,
    },
    (a) => {
      const r = Router();
      r.post('/webhook/echo', (req, res) => void res.status(202).json({ success: true, got: req.body }));
      r.post('/api/echo', (req, res) => void res.json({ got: req.body }));
      r.get(
        '/api/boom',
        asyncHandler(async () => {
          throw new Error('secret internals at /srv/app.js:12');
        }),
      );
      r.get('/api/invalid', () => {
        throw badRequest('bad things', [{ path: ['a'], message: 'a is required' }]);
      });
      a.use(r);
    },
  );
  return { app, text };
}

describe('libs/http app factory', () => {
  it('answers a body over 256 kB with 413 in the endpoint envelope', async () => {
    const { app } = build();
    const big = JSON.stringify({ reference_id: 'x'.repeat(300 * 1024) });
    const ingest = await request(app).post('/webhook/echo').set('Content-Type', 'application/json').send(big);
    expect(ingest.status).toBe(413);
    expect(ingest.body).toEqual({ success: false, errors: [expect.stringContaining('256kb')], message: expect.any(String) });
    const api = await request(app).post('/api/echo').set('Content-Type', 'application/json').send(big);
    expect(api.status).toBe(413);
    expect(api.body).toEqual({ message: expect.stringContaining('256kb'), code: 4130, error: true, data: null });
  });

  it('gives the routes named in largeBodies their own limit, and names that limit in the 413', async () => {
    const { app } = build(true, { largeBodies: { match: (req) => req.path === '/api/echo', limit: '1mb' } });
    const big = { reference_id: 'x'.repeat(600 * 1024) };
    const ok = await request(app).post('/api/echo').set('Content-Type', 'application/json').send(JSON.stringify(big));
    expect(ok.status).toBe(200);
    expect(ok.body.got.reference_id).toHaveLength(600 * 1024);
    // Other routes keep 256 kB.
    expect((await request(app).post('/webhook/echo').set('Content-Type', 'application/json').send(JSON.stringify(big))).status).toBe(413);
    const tooBig = await request(app)
      .post('/api/echo')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ r: 'x'.repeat(1100 * 1024) }));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toEqual({ message: expect.stringContaining('1mb'), code: 4130, error: true, data: null });
  });

  it('refuses a __proto__ key at any depth, however it is spelled, with 400 in the envelope (joi skips it unseen)', async () => {
    const { app } = build(true, { largeBodies: { match: (req) => req.path === '/api/echo', limit: '1mb' } });
    // seed 653615642 of the e2e contract fuzz: a portal link was created from {"capabilities":[…],"__proto__":null}
    const top = await request(app).post('/webhook/echo').set('Content-Type', 'application/json').send('{"reference_id":"A","__proto__":null}');
    expect(top.status).toBe(400);
    expect(top.body).toEqual({ success: false, errors: ['Key "__proto__" is not allowed in the JSON body'], message: expect.any(String) });
    for (const body of ['{"a":{"__proto__":{"admin":true}}}', '[{"\\u005f_proto__":1}]']) {
      const res = await request(app).post('/api/echo').set('Content-Type', 'application/json').send(body);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { message: 'Key "__proto__" is not allowed in the JSON body', code: 4000, error: true, data: null },
      });
    }
    // As a value, or as part of a longer key, it is text like any other.
    expect((await request(app).post('/api/echo').set('Content-Type', 'application/json').send('{"a":"__proto__","__proto__x":1}')).body.got).toEqual({
      a: '__proto__',
      __proto__x: 1,
    });
  });

  it('refuses JSON nested deeper than 32 levels with 400 in the envelope; brackets inside strings are text', async () => {
    const { app } = build();
    const deep = `${'['.repeat(33)}${']'.repeat(33)}`;
    const ingest = await request(app).post('/webhook/echo').set('Content-Type', 'application/json').send(`{"reference_id":${deep}}`);
    expect({ status: ingest.status, body: ingest.body }).toEqual({
      status: 400,
      body: { success: false, errors: ['JSON nesting deeper than 32 levels is not allowed'], message: expect.any(String) },
    });
    const api = await request(app)
      .post('/api/echo')
      .set('Content-Type', 'application/json')
      .send(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`);
    expect({ status: api.status, body: api.body }).toEqual({
      status: 400,
      body: { message: 'JSON nesting deeper than 32 levels is not allowed', code: 4000, error: true, data: null },
    });
    // A string holding an escaped backslash, an escaped quote and brackets.
    const text = `${String.raw`"\\\"`}${'{['.repeat(100)}"`;
    const ok = await request(app)
      .post('/api/echo')
      .set('Content-Type', 'application/json')
      .send(`{"a":${'['.repeat(31)}${text}${']'.repeat(31)},"b":1}`);
    expect(ok.status).toBe(200);
  });

  it('answers malformed JSON with 400 in the envelope', async () => {
    const { app } = build();
    const res = await request(app).post('/webhook/echo').set('Content-Type', 'application/json').send('{"reference_id": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, errors: ['Malformed JSON body'], message: 'Malformed JSON body' });
  });

  it('refuses a key given twice in one object, however it is spelled or nested, with 400 in the envelope, on large-body routes too', async () => {
    const { app } = build(true, { largeBodies: { match: (req) => req.path === '/api/echo', limit: '1mb' } });
    // JSON.parse would keep the last value, another parser the first: the body means two things.
    const ingest = await request(app).post('/webhook/echo').set('Content-Type', 'application/json').send('{"reference_id":"A","reference_id":"B"}');
    expect(ingest.status).toBe(400);
    expect(ingest.body).toEqual({ success: false, errors: ['Duplicate key "reference_id" in the JSON body'], message: expect.any(String) });
    // seed 185564734 of the e2e fuzz: the layout import's large-body parser took `"sites"` twice
    const layout = await request(app)
      .post('/api/echo')
      .set('Content-Type', 'application/json')
      .send(`{"sites":"${'x'.repeat(300 * 1024)}","sites":[]}`);
    expect(layout.status).toBe(400);
    expect(layout.body).toEqual({ message: 'Duplicate key "sites" in the JSON body', code: 4000, error: true, data: null });
    // seed 477119579 of the e2e fuzz: behind a byte-order mark (which the parser skips) the check saw no JSON at all
    const bom = await request(app).post('/api/echo').set('Content-Type', 'application/json').send('\ufeff{"external_id":[],"external_id":null}');
    expect(bom.body).toEqual({ message: 'Duplicate key "external_id" in the JSON body', code: 4000, error: true, data: null });
    expect((await request(app).post('/api/echo').set('Content-Type', 'application/json').send('\ufeff{"a":1}')).body.got).toEqual({ a: 1 });
    for (const body of ['{"a":{"b":1,"\\u0062":2}}', '[{"x":1},{"y":{"z":[{"k":1,"k":2}]}}]', `${'{"a":'.repeat(5000)}{"d":1,"d":1}${'}'.repeat(5000)}`]) {
      expect((await request(app).post('/api/echo').set('Content-Type', 'application/json').send(body)).status).toBe(400);
    }
    // Equal keys in different objects, and keys equal to values, are fine.
    const ok = await request(app).post('/api/echo').set('Content-Type', 'application/json').send('{"a":{"a":"a"},"b":[{"a":1},{"a":2}],"c":"a"}');
    expect(ok.status).toBe(200);
    expect(ok.body.got).toEqual({ a: { a: 'a' }, b: [{ a: 1 }, { a: 2 }], c: 'a' });
  });

  it('refuses a body that is not JSON', async () => {
    const { app } = build();
    const res = await request(app).post('/api/echo').set('Content-Type', 'text/plain').send('reference_id=1');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: 'Content-Type must be application/json', error: true });
  });

  it('reads JSON bodies as UTF-8 only: other bytes, other charsets and a Content-Encoding the bytes lack are refused in the envelope (found by the e2e contract fuzz)', async () => {
    const { app } = build();
    const post = (body: Buffer, headers: Record<string, string>) => {
      let r = request(app).post('/webhook/echo');
      for (const [k, v] of Object.entries(headers)) r = r.set(k, v);
      // The bytes as they are (superagent would write a Buffer as JSON).
      return r.serialize((b: unknown) => b as string).send(body);
    };
    // Bytes that are not UTF-8 were stored as U+FFFD, not as sent.
    for (const bad of [[0x80], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xff]]) {
      const res = await post(Buffer.concat([Buffer.from('{"reference_id":"'), Buffer.from(bad), Buffer.from('"}')]), { 'Content-Type': 'application/json' });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { success: false, errors: ['The body is not valid UTF-8'], message: 'The body is not valid UTF-8' },
      });
    }
    // UTF-16 was decoded as such by the parser and read as UTF-8 by the duplicate-key check: a key twice got through.
    const utf16 = await post(Buffer.from('{"reference_id":"A","reference_id":"B"}', 'utf16le'), { 'Content-Type': 'application/json; charset=utf-16le' });
    expect({ status: utf16.status, body: utf16.body }).toEqual({
      status: 415,
      body: { success: false, errors: ['Unsupported body encoding: JSON bodies are UTF-8'], message: expect.any(String) },
    });
    expect((await post(Buffer.from('{"a":1}'), { 'Content-Type': 'application/json; charset=latin1' })).status).toBe(415);
    // A Content-Encoding the bytes do not have was a 500 (zlib's error).
    for (const encoding of ['deflate', 'gzip']) {
      const res = await post(Buffer.from('{"a":1}'), { 'Content-Type': 'application/json', 'Content-Encoding': encoding });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { success: false, errors: ['The body does not match its Content-Encoding'], message: expect.any(String) },
      });
    }
    // What is so encoded is read; UTF-8, declared or not, is the rule.
    const gzipped = await post(gzipSync('{"a":"é"}'), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    expect({ status: gzipped.status, got: gzipped.body.got }).toEqual({ status: 202, got: { a: 'é' } });
    expect((await post(Buffer.from('{"a":"é"}'), { 'Content-Type': 'application/json; charset=UTF-8' })).status).toBe(202);
  });

  it('refuses U+0000 in a body (strings, keys, nested) or the URL with 400 in the envelope: the database cannot store it', async () => {
    const { app } = build();
    for (const body of ['{"guest":{"name":"Ada\\u0000"}}', '{"a\\u0000":1}', `${'['.repeat(30)}"\\u0000"${']'.repeat(30)}`]) {
      const res = await request(app).post('/webhook/echo').set('Content-Type', 'application/json').send(body);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { success: false, errors: ['Text must not contain the NUL character (U+0000)'], message: 'Text must not contain the NUL character (U+0000)' },
      });
    }
    const inUrl = await request(app).get('/api/invalid?name=a%00b');
    expect(inUrl.status).toBe(400);
    expect(inUrl.body).toMatchObject({ error: true, message: 'Text must not contain the NUL character (U+0000)' });
    // other control characters and lone surrogates are stored fine; refusing them is each field's business
    const fine = await request(app).post('/webhook/echo').set('Content-Type', 'application/json').send('{"a":"\\u0001\\ud800"}');
    expect(fine.status).toBe(202);
  });

  it('echoes a given correlation id, generates one otherwise, and logs it', async () => {
    const { app, text } = build();
    const given = await request(app).post('/api/echo').set('X-Correlation-Id', 'trace-42').send({ a: 1 });
    expect(given.headers['x-correlation-id']).toBe('trace-42');
    expect(given.body).toEqual({ got: { a: 1 } });
    const generated = await request(app).get('/api/echo-missing');
    expect(generated.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    const bogus = await request(app).get('/healthz').set('X-Correlation-Id', 'bad id with spaces {"x":1}');
    expect(bogus.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(text()).toContain('"correlationId":"trace-42"');
  });

  it('never leaks a stack trace', async () => {
    const { app, text } = build();
    const res = await request(app).get('/api/boom');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ message: 'Internal server error', code: 5000, error: true, data: null });
    expect(JSON.stringify(res.body)).not.toContain('secret internals');
    expect(text()).toContain('secret internals'); // but the operator sees it in the log
  });

  it('renders validation errors and unknown routes in the envelope', async () => {
    const { app } = build();
    expect((await request(app).get('/api/invalid')).body).toEqual({ message: 'bad things', code: 4000, error: true, data: null });
    const missing = await request(app).get('/webhook/nothing');
    expect(missing.status).toBe(404);
    expect(missing.body.success).toBe(false);
  });

  it('serves health, readiness, metrics and security headers', async () => {
    expect((await request(build().app).get('/healthz')).body).toEqual({ status: 'ok' });
    const notReady = await request(build(false).app).get('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toEqual({ status: 'not ready', checks: { database: false } });
    // A named service says who answered: a test launcher tells its app from another one on the port.
    expect((await request(build(true, { service: 'ingest-gateway' }).app).get('/readyz')).body).toEqual({
      status: 'ready',
      service: 'ingest-gateway',
      checks: { database: true },
    });
    const metrics = await request(build().app).get('/metrics');
    expect(metrics.text).toContain('process_cpu_user_seconds_total');
    expect(metrics.headers['x-content-type-options']).toBe('nosniff');
    expect(metrics.headers['x-powered-by']).toBeUndefined();
  });

  it('keeps ingest tokens out of the request log', async () => {
    const { app, text } = build();
    await request(app).post('/webhook/t/tok_supersecret').send({});
    // Express routes paths ignoring case: `/WEBHOOK/T/<token>` reaches the ingest route too.
    await request(app).post('/WEBHOOK/T/tok_uppersecret').send({});
    await request(app).post('/Webhook//t/tok_slashsecret').send({});
    expect(text()).toContain('/WEBHOOK/T/[REDACTED]');
    for (const secret of ['tok_supersecret', 'tok_uppersecret', 'tok_slashsecret']) expect(text()).not.toContain(secret);
  });
});

describe('form-encoded bodies', () => {
  it('are accepted only where the app allows them', async () => {
    const { logger } = captureLogger('http-test');
    const app = createHttpApp(
      { logger, metrics: createMetrics('form-test'), readiness: createReadiness(), formBodies: (req) => req.path.startsWith('/v3/') },
      (a) => {
        a.post('/v3/key/send', express.urlencoded({ extended: false }), (req, res) => void res.json(req.body));
        a.post('/api/echo', (req, res) => void res.json(req.body));
      },
    );
    const vendor = await request(app).post('/v3/key/send').type('form').send({ lockId: '7' });
    expect(vendor.body).toEqual({ lockId: '7' });
    const api = await request(app).post('/api/echo').type('form').send({ lockId: '7' });
    expect(api.status).toBe(400);
    expect(api.body.message).toBe('Content-Type must be application/json');
  });
});
