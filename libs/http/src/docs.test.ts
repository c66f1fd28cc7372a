import express from 'express';
import request from 'supertest';
import { apiDocs } from './docs';

describe('apiDocs: a host serves its contract and its reference', () => {
  const document = { openapi: '3.1.0', info: { title: 'Test <host>', version: '1' }, paths: {} };
  const app = express();
  app.use(apiDocs(document).middleware);
  app.get('/other', (_req, res) => void res.json({ other: true }));

  it('GET /openapi.json is the document, readable from any origin', async () => {
    const res = await request(app).get('/openapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.body).toEqual(document);
  });

  it('GET /docs renders the document with the renderer served from node_modules, nothing from another origin', async () => {
    const res = await request(app).get('/docs').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('<title>Test &#60;host&#62;</title>');
    expect(res.text).toContain('spec-url="openapi.json"');
    const scripts = [...res.text.matchAll(/src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toEqual(['docs/redoc.standalone.js']);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");

    const script = await request(app).get('/docs/redoc.standalone.js').expect(200);
    expect(script.headers['content-type']).toMatch(/^application\/javascript/);
    expect(script.text.length).toBeGreaterThan(100_000);
    expect(script.text).toContain('Redoc');
  });

  it('HEAD answers like GET without a body; other methods and paths go on to the routes', async () => {
    const head = await request(app).head('/openapi.json').expect(200);
    expect(head.text ?? '').toBe('');
    await request(app).post('/openapi.json').expect(404);
    expect((await request(app).get('/other').expect(200)).body).toEqual({ other: true });
  });
});
