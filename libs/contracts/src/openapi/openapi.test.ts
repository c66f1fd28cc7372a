import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { employeeAccessSchema } from '../employee/employee-access.request';
import { callbackEndpointSchema } from '../identity/admin.requests';
import { OpenApiDocument, apiDocument, findOperation, ingestDocument, operationsOf, routeDocumented } from './index';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../../..');

/**
 * Validates a document with @seriousme/openapi-schema-validator (the OpenAPI 3.1 meta-schema, and
 * every $ref resolved). The package is ESM only and jest loads CommonJS: it runs in a child node.
 */
async function validateDocument(doc: OpenApiDocument): Promise<{ valid: boolean; errors?: unknown }> {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const v = new Validator();
    const res = await v.validate(JSON.parse(input));
    process.stdout.write(JSON.stringify({ valid: res.valid, errors: res.errors, version: v.version }));
  `;
  const child = run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  child.child.stdin?.end(JSON.stringify(doc));
  const { stdout } = await child;
  return JSON.parse(stdout);
}

/** The schema of a request body, with the document's components, for ajv. */
function requestValidator(doc: OpenApiDocument, method: string, route: string) {
  const op = findOperation(doc, method, route);
  if (!op) throw new Error(`no ${method} ${route}`);
  const schema = (op.operation.requestBody as { content: Record<string, { schema: object }> }).content['application/json'].schema;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile({ ...schema, components: doc.components });
}

describe('the OpenAPI documents', () => {
  it.each([
    ['{base_url}', apiDocument],
    ['{webhook_url}', ingestDocument],
  ])('the document of %s is valid OpenAPI 3.1, its $refs resolve', async (_host, doc) => {
    const result = await validateDocument(doc());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('every operation has its own operationId, a response and, where it takes a key or a token, its security', () => {
    const ids = new Set<string>();
    for (const doc of [apiDocument(), ingestDocument()]) {
      for (const { method, template } of operationsOf(doc)) {
        const op = doc.paths[template][method] as { operationId?: string; responses?: object; security?: unknown[] };
        expect({ template, method, operationId: op.operationId && !ids.has(op.operationId) }).toEqual({ template, method, operationId: true });
        ids.add(op.operationId as string);
        expect(Object.keys(op.responses ?? {})).toContain('429');
        // The credential is in the request itself: the ingest token in the path, a portal link's token in the body.
        const credentialInRequest = template.startsWith('/webhook/t/') || `${method} ${template}` === 'post /portal/api/session';
        if (!credentialInRequest) expect({ template, method, secured: (op.security ?? []).length > 0 }).toEqual({ template, method, secured: true });
      }
    }
  });

  it('covers every endpoint of SPEC on its host', () => {
    const api = apiDocument();
    const ingest = ingestDocument();
    for (const level of ['all', 'sites', 'buildings', 'floors', 'rooms', 'beds']) {
      expect(findOperation(api, 'GET', `/api/v4/location/${level}`)).toBeDefined();
      expect(findOperation(api, 'GET', `/api/v3/location/${level}`)).toBeDefined();
    }
    expect(findOperation(api, 'PATCH', '/api/v4/location/rooms/0123456789abcdef01234567')).toBeDefined();
    expect(findOperation(api, 'PUT', '/api/v4/location/external-ids')?.template).toBe('/api/v4/location/external-ids');
    expect(findOperation(api, 'GET', '/api/v4/bookings/BK-1/access')).toBeDefined();
    expect(findOperation(api, 'GET', '/api/v3/booking/getLockData/BK-1')).toBeDefined();
    expect(findOperation(api, 'GET', '/api/v2/booking/access?ref_id=BK-1')?.operation.deprecated).toBe(true);
    expect(findOperation(api, 'POST', '/api/v3/access/employee')).toBeDefined();
    expect(findOperation(ingest, 'POST', '/webhook/t/abc')).toBeDefined();
    expect(findOperation(ingest, 'POST', '/webhook/generic')).toBeDefined();
    expect(findOperation(ingest, 'GET', '/webhook/events/evt_1')?.params).toEqual({ eventId: 'evt_1' });
    expect(findOperation(ingest, 'GET', '/webhook/events/reference/BK-1')?.template).toBe('/webhook/events/reference/{referenceId}');
    expect(findOperation(ingest, 'GET', '/webhook/events')).toBeDefined();
    expect(findOperation(ingest, 'POST', '/webhook/retry')).toBeDefined();
    // the callbacks, with their signature and event headers
    const webhooks = api.webhooks as Record<string, { post: { parameters: { name: string }[] } }>;
    expect(Object.keys(webhooks).sort()).toEqual(['access.failed', 'access.provisioned', 'access.revoked']);
    expect(webhooks['access.provisioned'].post.parameters.map((p) => p.name)).toEqual(
      expect.arrayContaining(['X-Service-Signature', 'X-Service-Event', 'X-Service-Timestamp']),
    );
  });

  it('tells an Express route the document has from one it lacks', () => {
    expect(routeDocumented(apiDocument(), 'GET', '/api/v4/location/:levels')).toBe(true);
    expect(routeDocumented(apiDocument(), 'PATCH', '/api/v3/location/:levels/:id')).toBe(true);
    expect(routeDocumented(apiDocument(), 'POST', '/api/v4/location/:levels')).toBe(false);
    expect(routeDocumented(ingestDocument(), 'DELETE', '/webhook/events/:eventId')).toBe(false);
  });

  it('a request body is described by the joi schema that validates it: what joi accepts, the document accepts', () => {
    const employee = requestValidator(apiDocument(), 'POST', '/api/v3/access/employee');
    const timed = {
      ref_id: 'EMP12345',
      type: 'TIMED',
      startDate: '2026-12-01T08:00:00Z',
      endDate: '2026-12-31T18:00:00Z',
      emp_id: '0123456789abcdef01234567',
      access_locations: [{ site_id: '*' }],
    };
    expect(employeeAccessSchema.validate(timed, { convert: false }).error).toBeUndefined();
    expect(employee(timed)).toBe(true);
    const wrong = { ...timed, ref_id: 'short', surprise: 1 };
    expect(employeeAccessSchema.validate(wrong, { convert: false }).error).toBeDefined();
    expect(employee(wrong)).toBe(false);

    const callback = requestValidator(apiDocument(), 'PUT', '/admin/v1/companies/0123456789abcdef01234567/callback');
    const hmac = { url: 'https://receiver.example.com/hooks', auth: { type: 'hmac' } };
    expect(callbackEndpointSchema.validate(hmac).error).toBeUndefined();
    expect(callback(hmac)).toBe(true);
    expect(callback({ url: 'https://receiver.example.com/hooks' })).toBe(false);
  });

  it('documents the booking event a customer sends, SPEC example first', () => {
    const booking = requestValidator(ingestDocument(), 'POST', '/webhook/t/abc');
    expect(
      booking({
        reference_id: 'BK-2026-0001',
        action: 'create',
        room_number: '101',
        check_in: '2026-12-01',
        check_out: '2026-12-04',
        guest: { email: 'ada@example.com' },
        access_type: ['EKEY', 'CARD'],
        card_id: 'C-1',
      }),
    ).toBe(true);
    expect(booking({ action: 'create' })).toBe(false);
    expect(booking({ reference_id: 'has space', action: 'create' })).toBe(false);
  });
});
