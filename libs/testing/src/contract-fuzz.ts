import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import type { OpenApiDocument } from '@smartlock/contracts';
import { documentValidator, schemaErrors } from './contract';
import { BodyMutation, Hints, JsonSchema, ODD_KEYS, applyMutations, bodyMutation, documentResolver, invalidOf, toJsonText, validOf } from './schema-fuzz';

/**
 * Requests generated from an OpenAPI document, one operation at a time, and what the document says
 * of each (e2e/src/fuzz.e2e.test.ts): parameters, headers, credentials and body drawn from the
 * operation's own schemas, valid throughout or changed in a few places (a value past its rules, a
 * wrong type, an operator object, a huge or deep body, a key twice, a bad encoding, a missing or
 * foreign credential). A route added to the document is fuzzed the day it is documented.
 */

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: JsonSchema;
}

export interface DocumentedOperation {
  template: string;
  method: string;
  operationId: string;
  parameters: Parameter[];
  /** The alternatives of `security` (each a scheme name); empty: open. */
  schemes: string[];
  body?: { schema: JsonSchema; required: boolean };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every operation of a document. */
export function documentedOperations(doc: OpenApiDocument): DocumentedOperation[] {
  return Object.entries(doc.paths).flatMap(([template, item]) =>
    METHODS.filter((m) => item[m]).map((method) => {
      const op = item[method] as Record<string, unknown>;
      const requestBody = op.requestBody as { required?: boolean; content?: Record<string, { schema: JsonSchema }> } | undefined;
      const json = requestBody?.content?.['application/json'];
      const security = (op.security ?? doc.security ?? []) as Record<string, unknown>[];
      return {
        template,
        method,
        operationId: String(op.operationId ?? `${method} ${template}`),
        parameters: [...((item.parameters as Parameter[] | undefined) ?? []), ...((op.parameters as Parameter[] | undefined) ?? [])],
        schemes: security.flatMap((s) => Object.keys(s)),
        ...(json ? { body: { schema: json.schema, required: requestBody?.required ?? false } } : {}),
      };
    }),
  );
}

/** How the request authenticates: the real credentials of `scheme`, none, junk, or another scheme's real ones. */
export type Auth = { kind: 'real'; scheme: string } | { kind: 'none' } | { kind: 'junk'; header: string; value: string } | { kind: 'foreign'; scheme: string };

/** One generated request, as data: built into HTTP when it is sent (`httpOf`), when the live credentials are known. */
export interface FuzzRequest {
  operation: DocumentedOperation;
  auth: Auth;
  /** Path parameters, decoded. */
  path: Record<string, string>;
  /** Query pairs as sent (a name may carry brackets: `page[$gt]`). */
  query: [string, string][];
  headers: Record<string, string>;
  body?: { bytes: Buffer; contentType?: string; contentEncoding?: string };
  /** What was changed from a request valid throughout; empty: none. */
  changes: string[];
  /** Why the document refuses the request: it must not be accepted. */
  invalid: string[];
  /** Why the document neither allows nor refuses it (a byte-order mark, a compressed body): either outcome is fine. */
  unclear: string[];
}

/** The live parts of a request: real credentials per scheme, and values that change during a run (a CSRF token). */
export interface Live {
  credentials(scheme: string, op: DocumentedOperation): Record<string, string>;
  /** A value as sent: placeholders of the hints replaced by their live value. */
  resolve(value: string, op: DocumentedOperation): string;
}

/**
 * Printable ASCII, as a header value may be; what is sent is what is judged. Parameters stay under
 * 3,000 characters: Node's HTTP parser answers a request line and headers past 16 kB with a bare
 * 431 before any app sees it.
 */
const MAX_PARAM = 3000;
const headerSafe = (v: string) =>
  v
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(0, MAX_PARAM);
const wellFormed = (v: string) => v.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

/** A generated value as the text of a parameter. */
function paramText(v: unknown): string {
  let text = wellFormed(typeof v === 'string' ? v : (JSON.stringify(v) ?? 'undefined'));
  while (encodeURIComponent(text).length > MAX_PARAM) text = wellFormed(text.slice(0, Math.floor(text.length * 0.7)));
  return text;
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** A query or path parameter's text as the value its schema describes (OpenAPI's `form` style of a primitive). */
function coerce(text: string, schema: Record<string, unknown>): unknown {
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  if ((types.includes('integer') || types.includes('number')) && JSON_NUMBER.test(text)) return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

const CONTENT_TYPES = ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=UTF-8'];
const BAD_CONTENT_TYPES = [
  '',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=latin1',
  'text/json',
  'application/jsonx',
  'application/json-patch+json',
];
const MALFORMED = ['{', '{"a":}', "{'a':1}", 'NaN', '[1,2', '{"a":1}}', '\u0000', '{"a":1,}', 'undefined', '{"__proto__":', ''];

/** What is done to the transport of a body (its bytes, type and encoding). */
type Transport =
  | { op: 'content-type'; value: string }
  | { op: 'utf16' }
  | { op: 'bad-utf8'; at: number }
  | { op: 'bom' }
  | { op: 'gzip' }
  | { op: 'encoding'; value: string }
  | { op: 'malformed'; text: string }
  | { op: 'truncate'; at: number };

const transportArb: fc.Arbitrary<Transport> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES, ...BAD_CONTENT_TYPES).map((value): Transport => ({ op: 'content-type', value })) },
  { weight: 1, arbitrary: fc.constant<Transport>({ op: 'utf16' }) },
  { weight: 2, arbitrary: fc.nat().map((at): Transport => ({ op: 'bad-utf8', at })) },
  { weight: 1, arbitrary: fc.constant<Transport>({ op: 'bom' }) },
  { weight: 1, arbitrary: fc.constant<Transport>({ op: 'gzip' }) },
  { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'x-junk', 'identity, gzip').map((value): Transport => ({ op: 'encoding', value })) },
  { weight: 1, arbitrary: fc.constantFrom(...MALFORMED).map((text): Transport => ({ op: 'malformed', text })) },
  { weight: 1, arbitrary: fc.nat().map((at): Transport => ({ op: 'truncate', at })) },
);

/** Bytes that are not UTF-8: a lone continuation byte, a cut sequence, an overlong encoding, a surrogate. */
const NOT_UTF8 = [
  Buffer.from([0x80]),
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xff]),
];

function transported(text: string, t: Transport | undefined): { bytes: Buffer; contentType?: string; contentEncoding?: string; change?: string } {
  const utf8 = Buffer.from(text, 'utf8');
  if (!t) return { bytes: utf8, contentType: 'application/json' };
  switch (t.op) {
    case 'content-type':
      return { bytes: utf8, ...(t.value ? { contentType: t.value } : {}), change: `content-type ${JSON.stringify(t.value)}` };
    case 'utf16':
      return { bytes: Buffer.from(text, 'utf16le'), contentType: 'application/json; charset=utf-16le', change: 'body in UTF-16' };
    case 'bad-utf8': {
      const at = utf8.length ? t.at % utf8.length : 0;
      // Inside a string when there is one (after a quote), so a lenient decoder would store U+FFFD.
      const quote = utf8.indexOf(0x22, at);
      const cut = quote >= 0 ? quote + 1 : at;
      const bad = NOT_UTF8[t.at % NOT_UTF8.length];
      return {
        bytes: Buffer.concat([utf8.subarray(0, cut), bad, utf8.subarray(cut)]),
        contentType: 'application/json',
        change: `bytes ${bad.toString('hex')} that are not UTF-8`,
      };
    }
    case 'bom':
      return { bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8]), contentType: 'application/json', change: 'a byte-order mark' };
    case 'gzip':
      return { bytes: gzipSync(utf8), contentType: 'application/json', contentEncoding: 'gzip', change: 'gzip-compressed' };
    case 'encoding':
      return { bytes: utf8, contentType: 'application/json', contentEncoding: t.value, change: `content-encoding ${t.value} over plain bytes` };
    case 'malformed':
      return { bytes: Buffer.from(t.text, 'utf8'), contentType: 'application/json', change: `malformed ${JSON.stringify(t.text)}` };
    case 'truncate': {
      const at = text.length > 1 ? t.at % (text.length - 1) : 0;
      return { bytes: Buffer.from(text.slice(0, at), 'utf8'), contentType: 'application/json', change: `cut at ${at}` };
    }
  }
}

/** Values of a header that no scheme would take. */
const junkCredential = fc
  .oneof(
    fc.constantFrom('', ' ', 'null', 'undefined', '{"$gt":""}', 'Bearer', 'Bearer ', 'Bearer null', 'a, b', 'sk_x', 'x'.repeat(4000)),
    fc.string({ maxLength: 60 }),
  )
  .map(headerSafe);
const CREDENTIAL_HEADERS = ['apikey', 'Authorization', 'Cookie'];

export interface GenerateOptions {
  /** The origin the document describes (a registered contract host: its validators judge). */
  origin: string;
  doc: OpenApiDocument;
  /** Real values by place, for a request of `op` authenticated with `scheme` (null: an open operation). */
  hints: (scheme: string | null, op: DocumentedOperation) => Hints;
  /** Every security scheme the system has credentials for. */
  schemes: string[];
}

/**
 * Requests of one operation: about two in five valid throughout (with the real credentials of one
 * of its schemes), the rest changed in one to three places (the credentials, a parameter, the body,
 * its transport).
 */
export function requestArbitrary(op: DocumentedOperation, o: GenerateOptions): fc.Arbitrary<FuzzRequest> {
  const r = documentResolver(o.doc);
  const foreign = o.schemes.filter((s) => !op.schemes.includes(s));
  const authArb: fc.Arbitrary<Auth> = op.schemes.length
    ? fc.oneof(
        { weight: 16, arbitrary: fc.constantFrom(...op.schemes).map((scheme): Auth => ({ kind: 'real', scheme })) },
        { weight: 1, arbitrary: fc.constant<Auth>({ kind: 'none' }) },
        {
          weight: 1,
          arbitrary: fc.tuple(fc.constantFrom(...CREDENTIAL_HEADERS), junkCredential).map(([header, value]): Auth => ({ kind: 'junk', header, value })),
        },
        ...(foreign.length ? [{ weight: 1, arbitrary: fc.constantFrom(...foreign).map((scheme): Auth => ({ kind: 'foreign', scheme })) }] : []),
      )
    : fc.oneof(
        { weight: 8, arbitrary: fc.constant<Auth>({ kind: 'none' }) },
        { weight: 1, arbitrary: fc.constantFrom(...o.schemes).map((scheme): Auth => ({ kind: 'foreign', scheme })) },
      );
  // What a changed request changes: a parameter of a kind it has (query always: an undocumented one), its body, its transport.
  const kinds = [
    ...['path', 'header'].filter((k) => op.parameters.some((p) => p.in === k)),
    'query',
    ...(op.body ? ['body', 'body', 'body', 'transport'] : []),
  ];
  const params = (where: Parameter['in']) => op.parameters.filter((p) => p.in === where);
  // Built once per operation (and per scheme where hints differ): building them walks the schemas.
  const changeOf = (where: Parameter['in']) => {
    const ps = params(where);
    if (!ps.length) return fc.constant(undefined);
    const hows = ['invalid', 'invalid', 'absent', ...(where === 'query' ? ['twice', 'operator'] : [])];
    return fc.oneof(...ps.map((p) => fc.tuple(fc.constantFrom(...hows), invalidOf(p.schema, r)).map(([how, value]) => ({ name: p.name, how, value }))));
  };
  const changes = { path: changeOf('path'), query: changeOf('query'), header: changeOf('header'), body: op.body ? bodyMutation(op.body.schema, r) : undefined };
  const extraQuery = fc.option(fc.tuple(fc.oneof(fc.constantFrom(...ODD_KEYS), fc.string({ minLength: 1, maxLength: 8 })), fc.string({ maxLength: 8 })));
  const validByScheme = new Map<string | null, ReturnType<typeof validParts>>();
  function validParts(scheme: string | null) {
    const hints = o.hints(scheme, op);
    // Each parameter: its valid value, present when required (or in the path), else half the time.
    const of = (where: Parameter['in']) =>
      fc.tuple(
        ...params(where).map((p) => fc.tuple(p.required || where === 'path' ? fc.constant(true) : fc.boolean(), validOf(p.schema, r, hints, [where, p.name]))),
      );
    return { path: of('path'), query: of('query'), header: of('header'), body: op.body ? validOf(op.body.schema, r, hints, ['body']) : fc.constant(undefined) };
  }
  return fc
    .tuple(
      authArb,
      fc.oneof(
        { weight: 1, arbitrary: fc.constant<string[]>([]) },
        { weight: 1, arbitrary: fc.array(fc.constantFrom(...kinds), { minLength: 1, maxLength: 3 }) },
      ),
    )
    .chain(([auth, changed]) => {
      const scheme = auth.kind === 'real' ? auth.scheme : (op.schemes[0] ?? null);
      let valid = validByScheme.get(scheme);
      if (!valid) validByScheme.set(scheme, (valid = validParts(scheme)));
      const count = (k: string) => changed.filter((c) => c === k).length;
      return fc.record({
        auth: fc.constant(auth),
        path: valid.path,
        query: valid.query,
        header: valid.header,
        pathChange: count('path') ? changes.path : fc.constant(undefined),
        queryChanges: fc.array(changes.query, { minLength: count('query'), maxLength: count('query') }),
        extraQuery: count('query') ? extraQuery : fc.constant(null),
        headerChange: count('header') ? changes.header : fc.constant(undefined),
        body: valid.body,
        bodyAbsent: op.body && !op.body.required ? fc.boolean() : fc.constant(false),
        mutations: changes.body ? fc.array(changes.body, { minLength: count('body'), maxLength: count('body') }) : fc.constant<BodyMutation[]>([]),
        transport: count('transport') ? transportArb : fc.constant(undefined),
      });
    })
    .map((g) => build(op, o, g));
}

type Generated = {
  auth: Auth;
  path: [boolean, unknown][];
  query: [boolean, unknown][];
  header: [boolean, unknown][];
  pathChange?: { name: string; how: string; value: unknown };
  queryChanges: ({ name: string; how: string; value: unknown } | undefined)[];
  extraQuery: [string, string] | null;
  headerChange?: { name: string; how: string; value: unknown };
  body: unknown;
  bodyAbsent: boolean;
  mutations: BodyMutation[];
  transport?: Transport;
};

function build(op: DocumentedOperation, o: GenerateOptions, g: Generated): FuzzRequest {
  const changes: string[] = [];
  const invalid: string[] = [];
  const unclear: string[] = [];
  const req: FuzzRequest = { operation: op, auth: g.auth, path: {}, query: [], headers: {}, changes, invalid, unclear };
  if (g.auth.kind !== 'real' && op.schemes.length) changes.push(`auth ${g.auth.kind}`);
  if (g.auth.kind !== 'real' && op.schemes.length) invalid.push(`not authenticated by ${op.schemes.join(' or ')}`);
  if (g.auth.kind === 'foreign' && !op.schemes.length) changes.push(`auth ${g.auth.kind} on an open operation`);
  const validatorOf = (index: number) => documentValidator(o.origin, ['paths', op.template, op.method, 'parameters', String(index), 'schema']);
  const judgeParam = (index: number, text: string | undefined, as: string) => {
    const p = op.parameters[index];
    if (text === undefined) {
      if (p.required) invalid.push(`${as} ${p.name} missing`);
      return;
    }
    const v = validatorOf(index);
    if (!v(coerce(text, p.schema as Record<string, unknown>))) invalid.push(`${as} ${p.name}=${JSON.stringify(text.slice(0, 60))}: ${schemaErrors(v.errors)}`);
  };

  // Path: every parameter present (an empty segment, `.` or `..` would be another path).
  const pathParams = op.parameters.map((p, i) => ({ p, i })).filter(({ p }) => p.in === 'path');
  pathParams.forEach(({ p, i }, k) => {
    let value = paramText(g.path[k][1]);
    if (g.pathChange?.name === p.name) {
      value = paramText(g.pathChange.value);
      changes.push(`path ${p.name} ${g.pathChange.how}`);
    }
    if (value === '' || value === '.' || value === '..') value = `${value}_`;
    req.path[p.name] = value;
    judgeParam(i, value, 'path');
  });

  // Query.
  const queryParams = op.parameters.map((p, i) => ({ p, i })).filter(({ p }) => p.in === 'query');
  queryParams.forEach(({ p, i }, k) => {
    const change = g.queryChanges.find((c) => c?.name === p.name);
    const [present, value] = g.query[k];
    if (change) changes.push(`query ${p.name} ${change.how}`);
    if (change?.how === 'absent' || (!change && !present)) return judgeParam(i, undefined, 'query');
    const text = paramText(change ? change.value : value);
    if (change?.how === 'twice') {
      req.query.push([p.name, paramText(value)], [p.name, text]);
      invalid.push(`query ${p.name} twice`);
    } else if (change?.how === 'operator' || (change && change.value && typeof change.value === 'object' && !Array.isArray(change.value))) {
      // qs reads `name[$gt]=x` as an object: what an operator injection through a query looks like.
      const entries = change.value && typeof change.value === 'object' && !Array.isArray(change.value) ? Object.entries(change.value as object) : [['$gt', '']];
      for (const [k2, v2] of entries.length ? entries : [['$ne', '']]) req.query.push([`${p.name}[${k2}]`, paramText(v2)]);
      invalid.push(`query ${p.name} is an object`);
    } else if (change && Array.isArray(change.value)) {
      for (const v2 of change.value.length ? change.value : ['']) req.query.push([p.name, paramText(v2)]);
      if (change.value.length === 1) judgeParam(i, paramText(change.value[0]), 'query');
      else invalid.push(`query ${p.name} ${change.value.length} times`);
    } else {
      req.query.push([p.name, text]);
      judgeParam(i, text, 'query');
    }
  });
  if (g.extraQuery && !queryParams.some(({ p }) => p.name === g.extraQuery?.[0].replace(/\[.*$/, ''))) {
    req.query.push(g.extraQuery);
    changes.push(`query ${g.extraQuery[0]} (undocumented)`);
  }

  // Headers.
  const headerParams = op.parameters.map((p, i) => ({ p, i })).filter(({ p }) => p.in === 'header');
  headerParams.forEach(({ p, i }, k) => {
    const change = g.headerChange?.name === p.name ? g.headerChange : undefined;
    const [present, value] = g.header[k];
    if (change) changes.push(`header ${p.name} ${change.how}`);
    if (change?.how === 'absent' || (!change && !present)) return judgeParam(i, undefined, 'header');
    const text = headerSafe(paramText(change ? change.value : value));
    req.headers[p.name] = text;
    judgeParam(i, text, 'header');
  });

  // Body.
  if (op.body && !(g.bodyAbsent && !g.mutations.length && !g.transport)) {
    const { value, dups } = applyMutations(g.body, g.mutations);
    for (const m of g.mutations) changes.push(`body ${m.op} ${'path' in m ? m.path.join('.') : ''}${m.op === 'extra' || m.op === 'dupkey' ? ` ${m.key}` : ''}`);
    const text = toJsonText(value, dups);
    const t = transported(text, g.transport);
    if (t.change) changes.push(t.change);
    req.body = { bytes: t.bytes, contentType: t.contentType, contentEncoding: t.contentEncoding };
    judgeBody(req, req.body, o, text, dups.size > 0);
  } else if (op.body?.required) {
    invalid.push('no body');
  }
  return req;
}

function judgeBody(req: FuzzRequest, body: NonNullable<FuzzRequest['body']>, o: GenerateOptions, text: string, dup: boolean): void {
  const { bytes, contentType, contentEncoding } = body;
  const { invalid, unclear, operation: op } = req;
  if (!bytes.length) {
    if (op.body?.required) invalid.push('empty body');
    return;
  }
  if (!contentType || !/^application\/json(\s*;\s*charset=utf-8)?$/i.test(contentType)) invalid.push(`content-type ${JSON.stringify(contentType ?? null)}`);
  let raw = bytes;
  if (contentEncoding) {
    if (contentEncoding === 'gzip' && bytes[0] === 0x1f && bytes[1] === 0x8b) {
      unclear.push('gzip-compressed body');
      raw = Buffer.from(text, 'utf8');
    } else invalid.push(`content-encoding ${contentEncoding} over bytes that are not so encoded`);
  }
  if (!isUtf8(raw)) return void invalid.push('body is not UTF-8');
  if (raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) {
    // RFC 8259 8.1: a sender must not add one; a receiver may ignore it.
    unclear.push('byte-order mark');
    raw = raw.subarray(3);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return void invalid.push('not JSON');
  }
  if (dup) invalid.push('a key twice in one object');
  const v = documentValidator(o.origin, ['paths', op.template, op.method, 'requestBody', 'content', 'application/json', 'schema']);
  if (!v(parsed)) invalid.push(`body: ${schemaErrors(v.errors)}`);
}

/** The HTTP request of a generated one, with the live credentials. */
export function httpOf(req: FuzzRequest, origin: string, live: Live): { method: string; url: string; headers: Record<string, string>; body?: Buffer } {
  const path = req.operation.template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(live.resolve(req.path[name], req.operation)));
  const query = req.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(live.resolve(v, req.operation))}`).join('&');
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k] = live.resolve(v, req.operation);
  if (req.auth.kind === 'real' || req.auth.kind === 'foreign') Object.assign(headers, live.credentials(req.auth.scheme, req.operation));
  if (req.auth.kind === 'junk') headers[req.auth.header] = req.auth.value;
  if (req.body?.contentType) headers['Content-Type'] = req.body.contentType;
  if (req.body?.contentEncoding) headers['Content-Encoding'] = req.body.contentEncoding;
  return {
    method: req.operation.method.toUpperCase(),
    url: `${origin}${path}${query ? `?${query}` : ''}`,
    headers,
    ...(req.body ? { body: req.body.bytes } : {}),
  };
}

export interface RawResponse {
  status: number;
  /** JSON when it parses, else the text. */
  body: unknown;
  contentType: string;
}

/**
 * A client that sends a request exactly as given (bytes, headers) and reads the answer, outside the
 * test process's contract check of `fetch` (a fuzz judges its own requests, the invalid ones too).
 * Connections are kept alive across requests; `close` ends them.
 */
export function rawClient(): { send(r: { method: string; url: string; headers: Record<string, string>; body?: Buffer }): Promise<RawResponse>; close(): void } {
  const agent = new http.Agent({ keepAlive: true });
  return {
    send: (r) =>
      new Promise((resolve, reject) => {
        const req = http.request(
          r.url,
          { method: r.method, headers: { ...r.headers, ...(r.body ? { 'Content-Length': String(r.body.length) } : {}) }, agent },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('error', reject);
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let body: unknown = text;
              try {
                body = JSON.parse(text);
              } catch {
                // not JSON: kept as text
              }
              resolve({ status: res.statusCode ?? 0, body, contentType: String(res.headers['content-type'] ?? '') });
            });
          },
        );
        req.on('error', reject);
        req.end(r.body);
      }),
    close: () => agent.destroy(),
  };
}
