import axios from 'axios';
import { apiDocument, apiHostAppFor, ingestDocument, routeDocumented } from '@smartlock/contracts';
import { contractViolations, launchSystem, servedRoutes, System } from '@smartlock/testing';

/** Served by every app for operators (probes, Prometheus), not part of the integrators' contract. */
const OPERATIONS = new Set(['GET /healthz', 'GET /readyz', 'GET /metrics']);

/**
 * The OpenAPI documents are the contract of the two hosts: served by each, and complete: every route
 * an app serves on a public host is in its document (a route added without documenting it fails here).
 * Responses and accepted requests of every e2e test are checked against them (support/contract.setup.ts).
 */
describe('the OpenAPI contract of {base_url} and {webhook_url}', () => {
  let sys: System;

  beforeAll(async () => {
    sys = await launchSystem();
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it('each host serves its document at /openapi.json and a reference at /docs, from its own origin only', async () => {
    for (const [host, doc] of [
      [sys.baseUrl, apiDocument()],
      [sys.webhookUrl, ingestDocument()],
    ] as const) {
      const served = await axios.get(`${host}/openapi.json`);
      expect(served.data).toEqual(JSON.parse(JSON.stringify(doc)));
      const page = await axios.get(`${host}/docs`);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.data).toContain('spec-url="openapi.json"');
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      const script = await axios.get(`${host}/docs/redoc.standalone.js`);
      expect(script.status).toBe(200);
      expect(String(script.data).length).toBeGreaterThan(100_000);
    }
  });

  it('every route an app serves behind {base_url} is in the API document', () => {
    const undocumented: string[] = [];
    for (const app of ['location-api', 'access-api', 'admin-api', 'callback-dispatcher', 'ingest-gateway'] as const) {
      for (const route of servedRoutes(sys.logs(app))) {
        const [method, path] = route.split(' ');
        // Public when the edge sends the path to this app; the rest is internal (never reachable through {base_url}).
        if (apiHostAppFor(path.replace(/:[^/]+/g, 'x')) !== app) continue;
        if (!routeDocumented(apiDocument(), method, path)) undocumented.push(`${app}: ${route}`);
      }
    }
    expect(undocumented).toEqual([]);
  });

  it('every route the ingest gateway serves on {webhook_url} is in the ingest document', () => {
    // Less the portal's routes, which the edge serves on {base_url} (checked above).
    const routes = servedRoutes(sys.logs('ingest-gateway')).filter(
      (r) => !OPERATIONS.has(r) && apiHostAppFor(r.split(' ')[1].replace(/:[^/]+/g, 'x')) !== 'ingest-gateway',
    );
    expect(routes.length).toBeGreaterThan(5);
    expect(routes.filter((r) => !routeDocumented(ingestDocument(), r.split(' ')[0], r.split(' ')[1]))).toEqual([]);
  });

  it('a response that differs from the document fails the call that received it, naming the path and the field', async () => {
    // The documented error of a request without a key, read as if it were the success response.
    const res = await axios.get(`${sys.baseUrl}/api/v4/location/all`, { validateStatus: () => true });
    expect(res.status).toBe(401);
    expect(
      contractViolations({ method: 'GET', url: `${sys.baseUrl}/api/v4/location/all`, status: 200, responseBody: res.data, contentType: 'application/json' }),
    ).toEqual([expect.stringMatching(/^GET \/api\/v4\/location\/all → 200: response .*\/code must be equal to constant/)]);
  });
});
