import fc from 'fast-check';
import { apiDocument, ingestDocument } from '@smartlock/contracts';
import { documentValidator, registerContractHost, unregisterContractHost } from './contract';
import { documentedOperations, httpOf, requestArbitrary } from './contract-fuzz';
import { Deep, applyMutations, documentResolver, toJsonText, validOf } from './schema-fuzz';

// The contract fuzz's generators, against the documents themselves: what they call valid, the
// document's own validator (ajv) accepts, so the e2e rate of accepted valid requests measures the
// system, not the generator.
const HOSTS = [
  { origin: 'http://api.fuzz.test', doc: apiDocument() },
  { origin: 'http://ingest.fuzz.test', doc: ingestDocument() },
];

describe('requests generated from the OpenAPI documents', () => {
  beforeAll(() => HOSTS.forEach((h) => registerContractHost(h.origin, h.doc)));
  afterAll(() => HOSTS.forEach((h) => unregisterContractHost(h.origin)));

  it('every parameter and body value generated as valid is valid to the document', () => {
    const refused: string[] = [];
    for (const { origin, doc } of HOSTS) {
      const r = documentResolver(doc);
      for (const op of documentedOperations(doc)) {
        const parts = [
          ...op.parameters.map((p, i) => ({
            what: `${p.in} ${p.name}`,
            schema: p.schema,
            at: ['paths', op.template, op.method, 'parameters', String(i), 'schema'],
          })),
          ...(op.body
            ? [{ what: 'body', schema: op.body.schema, at: ['paths', op.template, op.method, 'requestBody', 'content', 'application/json', 'schema'] }]
            : []),
        ];
        for (const part of parts) {
          const validate = documentValidator(origin, part.at);
          for (const value of fc.sample(validOf(part.schema, r), { numRuns: 60, seed: 7 })) {
            if (!validate(value)) refused.push(`${op.operationId} ${part.what}: ${JSON.stringify(value).slice(0, 200)}`);
          }
        }
      }
    }
    expect(refused.slice(0, 10)).toEqual([]);
  });

  it('a request generated valid throughout is judged valid; changed ones are judged by what is sent', () => {
    const verdicts = { valid: 0, changed: 0, invalid: 0 };
    const wronglyInvalid: string[] = [];
    for (const { origin, doc } of HOSTS) {
      const ops = documentedOperations(doc);
      for (const op of ops) {
        const arb = requestArbitrary(op, { origin, doc, hints: () => () => undefined, schemes: ['apikey', 'adminToken', 'portalSession'] });
        for (const req of fc.sample(arb, { numRuns: 40, seed: 11 })) {
          const http = httpOf(req, origin, { credentials: () => ({ apikey: 'k' }), resolve: (v) => v });
          expect(http.url.startsWith(`${origin}/`)).toBe(true);
          if (req.changes.length === 0) {
            verdicts.valid++;
            if (req.invalid.length) wronglyInvalid.push(`${op.operationId}: ${req.invalid.join('; ')}`);
          } else {
            verdicts.changed++;
            if (req.invalid.length) verdicts.invalid++;
          }
        }
      }
    }
    expect(wronglyInvalid.slice(0, 10)).toEqual([]);
    // About two in five requests are valid throughout; most changed ones break a rule.
    expect(verdicts.valid / (verdicts.valid + verdicts.changed)).toBeGreaterThan(0.3);
    expect(verdicts.invalid / verdicts.changed).toBeGreaterThan(0.5);
  });

  it('writes a key twice and thousands of levels deep as JSON text, without overflowing the stack', () => {
    const { value, dups } = applyMutations({ a: { b: 1 }, c: [1] }, [
      { op: 'dupkey', path: ['a'], key: 'b', first: { $gt: '' } },
      { op: 'set', path: ['c', '0'], value: new Deep(20_000) },
    ]);
    const text = toJsonText(value, dups);
    expect(text.startsWith('{"a":{"b":{"$gt":""},"b":1},"c":[{"a":{"a":')).toBe(true);
    expect(text.length).toBe('{"a":{"b":{"$gt":""},"b":1},"c":[]}'.length + '{"a":'.length * 20_000 + 1 + 20_000);
    expect(toJsonText({ __proto__: null, s: 'é\u2028"', n: [null, true, 1.5] })).toBe(JSON.stringify({ s: 'é\u2028"', n: [null, true, 1.5] }));
  });

  it('a value given to two mutations is copied into the body, never shared: no cycle, the given values unchanged (a fresh seed in CI replaced the body with an operator object, then added that same object to it, and the JSON text never ended)', () => {
    const operator = { $gt: '' };
    const { value, dups } = applyMutations({ a: 1 }, [
      { op: 'replace', value: operator },
      { op: 'extra', path: [], key: 'k', value: operator },
      { op: 'set', path: ['k', '$ne'], value: operator },
    ]);
    expect(toJsonText(value, dups)).toBe('{"$gt":"","k":{"$gt":"","$ne":{"$gt":""}}}');
    expect(operator).toEqual({ $gt: '' });
  });

  it('a key doubled, then deleted, is not a key twice (the contract fuzz judged such a body invalid: fixed seed 20261122 at FUZZ_RUNS=30000)', () => {
    const { value, dups } = applyMutations({ external_id: 'E1', other: 1 }, [
      { op: 'dupkey', path: [], key: 'external_id', first: null },
      { op: 'delete', path: ['external_id'] },
    ]);
    expect(dups.size).toBe(0);
    expect(toJsonText(value, dups)).toBe('{"other":1}');
  });
});
