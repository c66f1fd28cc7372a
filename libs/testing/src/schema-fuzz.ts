import fc from 'fast-check';

/**
 * fast-check arbitraries from the JSON Schemas of the OpenAPI documents (the subset they use: type,
 * const, enum, pattern, format, min/maxLength, minimum/maximum, items, min/maxItems, uniqueItems,
 * properties, required, additionalProperties, anyOf, oneOf, allOf, not, $ref), for the contract fuzz
 * (e2e/src/fuzz.e2e.test.ts): values a schema accepts, at its boundaries too, and values just past
 * them. Whether a value is valid is decided by a validator (ajv) afterwards, never by this file: the
 * generators aim, the validator judges.
 */

export type JsonSchema = Record<string, unknown> | boolean;

/** Where a value sits in a request: `['body', 'sites', '0', 'name']`, `['query', 'page']`. */
export type ValuePath = string[];

/** Known-good values by where they go (the system's real ids), so valid requests reach real data. */
export type Hints = (path: ValuePath, schema: Record<string, unknown>) => fc.Arbitrary<unknown> | undefined;

/** A marker for `{"a":{"a":…1}}` n levels deep: written by `toJsonText` (JSON.stringify would overflow the stack). */
export class Deep {
  constructor(readonly levels: number) {}
}

/** Resolves `$ref`s against the document they come from. */
export type Resolver = (ref: string) => JsonSchema;

export const documentResolver =
  (doc: object): Resolver =>
  (ref) => {
    if (!ref.startsWith('#/')) throw new Error(`external $ref ${ref}`);
    return ref
      .slice(2)
      .split('/')
      .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc) as JsonSchema;
  };

/** MongoDB query operators where a value belongs: each must be refused or stored as text, never run. */
export const OPERATORS: unknown[] = [
  { $gt: '' },
  { $ne: null },
  { $where: 'sleep(1000) || true' },
  { $regex: '.*' },
  { $in: ['a', 'b'] },
  { $exists: true },
  { $expr: { $eq: [1, 1] } },
];
/** Strings that break careless code: control and bidi characters, lone surrogates, injections, prototype keys. */
export const NASTY = [
  '',
  ' ',
  '\u0000',
  '\u202e\u0644',
  '💥🔑',
  'Ω≈ç√∫˜µ',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '../../etc/passwd',
  '%00%2e',
  'null',
  'NaN',
  '{"$gt":""}',
  'a.b',
  '$where',
  '__proto__',
  'constructor',
  '\ud800',
  ' padded ',
  '\n',
  'a\tb',
];
const TYPES = ['string', 'integer', 'number', 'boolean', 'null', 'array', 'object'] as const;
/** Keys that mean something to a database, a template or JavaScript itself. */
export const ODD_KEYS = ['$where', '$gt', 'a.b', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'isAdmin', '__proto__'];

/** Caps that keep generated bodies small unless the case is about size. */
const MAX_ARRAY = 3;
const MAX_STRING = 40;
const MAX_DEPTH = 8;

const anyJson = fc.jsonValue({ maxDepth: 2 });

/** The schema with `$ref`, `allOf` and a `type` list folded into what generation needs. */
function resolve(schema: JsonSchema, r: Resolver): Record<string, unknown> {
  if (typeof schema === 'boolean') return schema ? {} : { not: {} };
  let s = schema;
  for (let i = 0; typeof s.$ref === 'string' && i < 20; i++) {
    const { $ref, ...rest } = s;
    s = { ...(resolve(r($ref as string), r) as Record<string, unknown>), ...rest };
  }
  if (Array.isArray(s.allOf)) {
    const { allOf, ...rest } = s;
    s = (allOf as JsonSchema[]).reduce<Record<string, unknown>>((acc, part) => merge(acc, resolve(part, r)), rest);
  }
  return s;
}

/** Two schemas a value must both satisfy, as one (enough for generation: the validator judges). */
function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a, ...b };
  if (Array.isArray(a.required) || Array.isArray(b.required))
    out.required = [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])];
  if (a.properties && b.properties) out.properties = { ...(a.properties as object), ...(b.properties as object) };
  if (Array.isArray(a.type) && typeof b.type === 'string') out.type = b.type;
  if (typeof a.type === 'string' && b.type === undefined) out.type = a.type;
  return out;
}

/** Whether the schema is `{ not: {} }` (or `false`): no value is valid. */
const isNever = (s: JsonSchema) =>
  s === false || (typeof s === 'object' && s.not !== undefined && Object.keys(s.not as object).length === 0 && Object.keys(s).length === 1);

const typesOf = (s: Record<string, unknown>): string[] => {
  if (Array.isArray(s.type)) return s.type as string[];
  if (typeof s.type === 'string') return [s.type];
  if (s.properties || s.required || s.additionalProperties !== undefined) return ['object'];
  if (s.items) return ['array'];
  if (s.pattern || s.format || s.minLength !== undefined || s.maxLength !== undefined) return ['string'];
  if (s.minimum !== undefined || s.maximum !== undefined) return ['number'];
  return [];
};

/** ISO 8601 as joi's isoDate reads it: date-times (Z, offsets, fractions) and dates alone. */
export const isoDate = (min = Date.UTC(2000, 0, 1), max = Date.UTC(2099, 11, 31)): fc.Arbitrary<string> =>
  fc.tuple(fc.integer({ min, max }), fc.constantFrom('Z', 'Zms', 'date', '+02:00', '-0530')).map(([t, style]) => {
    const iso = new Date(Math.floor(t / 1000) * 1000).toISOString();
    if (style === 'Z') return iso.replace('.000Z', 'Z');
    if (style === 'Zms') return iso;
    if (style === 'date') return iso.slice(0, 10);
    return `${iso.slice(0, 19)}${style}`;
  });

function stringOf(s: Record<string, unknown>): fc.Arbitrary<string> {
  const min = (s.minLength as number | undefined) ?? 0;
  const max = (s.maxLength as number | undefined) ?? Infinity;
  const fits = (v: string) => v.length >= min && v.length <= max;
  let arb: fc.Arbitrary<string>;
  if (s.format === 'date-time') arb = isoDate();
  // JSON Schema's `date` is a full-date alone (ajv-formats refuses a time after it).
  else if (s.format === 'date') arb = isoDate().map((v) => v.slice(0, 10));
  else if (s.format === 'email')
    arb = fc.tuple(fc.stringMatching(/^[a-z0-9]{1,12}$/), fc.stringMatching(/^[a-z0-9]{1,10}$/)).map(([a, b]) => `${a}@${b}.example`);
  else if (s.format === 'uri') arb = fc.webUrl({ validSchemes: ['https', 'http'] });
  else if (typeof s.pattern === 'string') arb = fc.stringMatching(new RegExp(s.pattern));
  else {
    // Most strings short; the boundaries of the declared lengths often (fast-check biases towards them).
    const top = Math.min(max, Math.max(min, MAX_STRING));
    arb = fc.oneof(
      { weight: 4, arbitrary: fc.string({ minLength: min, maxLength: top, unit: 'grapheme-ascii' }) },
      { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: top, unit: 'grapheme' }) },
      { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: top, unit: 'binary' }) },
      { weight: 1, arbitrary: fc.constant('x'.repeat(Math.max(min, 1))) },
      ...(Number.isFinite(max) && max > 0 ? [{ weight: 1, arbitrary: fc.constant('y'.repeat(max)) }] : []),
    );
  }
  const not = s.not as Record<string, unknown> | undefined;
  const excluded = Array.isArray(not?.enum) ? (not.enum as unknown[]) : [];
  return arb.filter((v) => fits(v) && !excluded.includes(v));
}

function numberOf(s: Record<string, unknown>, integer: boolean): fc.Arbitrary<number> {
  const min = (s.minimum as number | undefined) ?? (s.exclusiveMinimum !== undefined ? (s.exclusiveMinimum as number) + 1 : undefined);
  const max = (s.maximum as number | undefined) ?? (s.exclusiveMaximum !== undefined ? (s.exclusiveMaximum as number) - 1 : undefined);
  const lo = min ?? (max !== undefined ? max - 1000 : -1000);
  const hi = max ?? lo + 1000;
  if (integer) return fc.oneof({ weight: 8, arbitrary: fc.integer({ min: lo, max: hi }) }, { weight: 1, arbitrary: fc.constantFrom(lo, hi) });
  return fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true });
}

/**
 * Values `schema` accepts (boundaries included). `hints` may offer real values for a place (an id
 * that exists); they are taken most of the time.
 */
export function validOf(schema: JsonSchema, r: Resolver, hints?: Hints, path: ValuePath = [], depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, r);
  const hinted = hints?.(path, s);
  const own = generate(s, r, hints, path, depth);
  return hinted ? fc.oneof({ weight: 9, arbitrary: hinted }, { weight: 1, arbitrary: own }) : own;
}

function generate(s: Record<string, unknown>, r: Resolver, hints: Hints | undefined, path: ValuePath, depth: number): fc.Arbitrary<unknown> {
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.oneOf ?? s.anyOf) as JsonSchema[] | undefined;
  if (branches) {
    // A branch of anyOf without its own type inherits the parent's (`{ required: [...] }` of an
    // object); joi-to-json's oneOf comes with a type listing every type, which the branches narrow.
    const rest = Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'oneOf' && k !== 'anyOf' && !(k === 'type' && branches === s.oneOf)));
    const viable = branches.filter((b) => !isNever(b));
    return fc.oneof(...viable.map((b) => generate(merge(rest, resolve(b, r)), r, hints, path, depth)));
  }
  const types = typesOf(s);
  if (!types.length) return anyJson;
  return fc.oneof(...types.map((t) => ofType(t, s, r, hints, path, depth)));
}

function ofType(t: string, s: Record<string, unknown>, r: Resolver, hints: Hints | undefined, path: ValuePath, depth: number): fc.Arbitrary<unknown> {
  switch (t) {
    case 'string':
      return stringOf(s);
    case 'integer':
      return numberOf(s, true);
    case 'number':
      return numberOf(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = (s.minItems as number | undefined) ?? 0;
      const maxLength = Math.max(minLength, Math.min((s.maxItems as number | undefined) ?? MAX_ARRAY, depth > 2 ? 1 : MAX_ARRAY));
      const items = s.items === undefined ? anyJson : validOf(s.items as JsonSchema, r, hints, [...path, '0'], depth + 1);
      return s.uniqueItems ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) }) : fc.array(items, { minLength, maxLength });
    }
    case 'object': {
      const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((s.required as string[] | undefined) ?? []);
      const entries = Object.entries(properties).filter(([k]) => required.has(k) || depth < MAX_DEPTH);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, p] of entries) if (!isNever(p)) record[k] = validOf(p, r, hints, [...path, k], depth + 1);
      const requiredKeys = [...required].filter((k) => k in record);
      // Required keys the schema names without describing: any value.
      for (const k of required) if (!(k in record) && !(k in properties)) record[k] = anyJson;
      return fc.record(record, { requiredKeys: [...requiredKeys, ...[...required].filter((k) => !(k in properties))] });
    }
    default:
      return anyJson;
  }
}

/** Values just past the schema's rules, or of another kind altogether. */
export function invalidOf(schema: JsonSchema, r: Resolver): fc.Arbitrary<unknown> {
  const s = resolve(schema, r);
  const types = typesOf(s);
  const otherTypes = TYPES.filter(
    (t) => !types.includes(t) && !(t === 'integer' && types.includes('number')) && !(t === 'number' && types.includes('integer')),
  );
  const wrongType = fc.constantFrom(...(otherTypes.length ? otherTypes : ['object' as const])).chain((t) => {
    switch (t) {
      case 'string':
        return fc.oneof(fc.constantFrom(...NASTY), fc.string({ maxLength: 12 }));
      case 'integer':
        return fc.integer();
      case 'number':
        return fc.constantFrom(1.5, -0.5, 1e308, 2 ** 53 + 1);
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return fc.oneof(fc.constant([]), fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 3 }));
      default:
        return fc.oneof(fc.constant({}), fc.dictionary(fc.string({ maxLength: 6 }), anyJson, { maxKeys: 3 }));
    }
  });
  const arbs: fc.Arbitrary<unknown>[] = [wrongType, fc.constantFrom(...OPERATORS), fc.integer({ min: 10, max: 3000 }).map((n) => new Deep(n))];
  if (types.includes('string') || 'const' in s || Array.isArray(s.enum)) {
    const min = s.minLength as number | undefined;
    const max = s.maxLength as number | undefined;
    if (max !== undefined) arbs.push(fc.constant('z'.repeat(max + 1)));
    if (min) arbs.push(fc.constant('z'.repeat(min - 1)));
    // Past the body limit (256 kB), and past any field's limit.
    arbs.push(fc.integer({ min: 600, max: 300_000 }).map((n) => 'x'.repeat(n)));
    arbs.push(fc.oneof(fc.constantFrom(...NASTY), fc.string({ unit: 'binary', maxLength: 40 })));
    const members = ('const' in s ? [s.const] : ((s.enum as unknown[] | undefined) ?? [])).filter((m): m is string => typeof m === 'string');
    if (members.length)
      arbs.push(fc.constantFrom(...members).chain((m) => fc.constantFrom(m.toUpperCase(), m.toLowerCase(), ` ${m}`, `${m}\n`, `${m}x`, m.slice(1))));
    if (typeof s.pattern === 'string') arbs.push(stringOf({ ...s, pattern: undefined }).map((v) => `${v} `));
  }
  if (types.includes('integer') || types.includes('number')) {
    if (s.minimum !== undefined) arbs.push(fc.constant((s.minimum as number) - 1));
    if (s.maximum !== undefined) arbs.push(fc.constant((s.maximum as number) + 1));
    if (types.includes('integer')) arbs.push(fc.constantFrom(0.5, 1.5, 1e21));
  }
  if (types.includes('array')) {
    if (s.minItems) arbs.push(fc.constant([]));
    if (s.maxItems !== undefined && (s.maxItems as number) <= 10_000 && s.items)
      arbs.push(validOf(s.items as JsonSchema, r).map((v) => Array.from({ length: (s.maxItems as number) + 1 }, () => v)));
    if (s.items) arbs.push(invalidOf(s.items as JsonSchema, r).map((v) => [v]));
  }
  return fc.oneof(...arbs);
}

/**
 * What is done to a valid body: a value set at a place (valid, boundary or invalid), a key removed,
 * an unknown key added, a key written twice, the body replaced.
 */
export type BodyMutation =
  | { op: 'set'; path: string[]; value: unknown }
  | { op: 'delete'; path: string[] }
  | { op: 'extra'; path: string[]; key: string; value: unknown }
  | { op: 'dupkey'; path: string[]; key: string; first: unknown }
  | { op: 'replace'; value: unknown };

/** Every place of a schema a mutation can aim at (object properties and array items, `0`). */
function placesOf(schema: JsonSchema, r: Resolver, depth = 0, path: string[] = []): { path: string[]; schema: JsonSchema; object: boolean }[] {
  const s = resolve(schema, r);
  const out: { path: string[]; schema: JsonSchema; object: boolean }[] = [{ path, schema: s, object: typesOf(s).includes('object') || !!s.properties }];
  if (depth > 6) return out;
  for (const b of ((s.oneOf ?? s.anyOf) as JsonSchema[] | undefined) ?? []) {
    const rb = resolve(b, r);
    if (rb.properties || rb.items) out.push(...placesOf(rb, r, depth, path).slice(1));
  }
  for (const [k, p] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)) out.push(...placesOf(p, r, depth + 1, [...path, k]));
  if (s.items) out.push(...placesOf(s.items as JsonSchema, r, depth + 1, [...path, '0']));
  return out;
}

/** Mutations of a body of `schema`. */
export function bodyMutation(schema: JsonSchema, r: Resolver): fc.Arbitrary<BodyMutation> {
  const places = placesOf(schema, r);
  const leaves = places.filter((p) => p.path.length > 0);
  const objects = places.filter((p) => p.object);
  const extraKey = fc.oneof(fc.constantFrom(...ODD_KEYS), fc.string({ minLength: 1, maxLength: 10 }));
  const arbs: { weight: number; arbitrary: fc.Arbitrary<BodyMutation> }[] = [
    // The whole body, or a part of it, replaced by something else.
    {
      weight: 2,
      arbitrary: fc
        .oneof(...[{ path: [] as string[], schema }, ...leaves].map((p) => invalidOf(p.schema, r)))
        .map((value): BodyMutation => ({ op: 'replace', value })),
    },
  ];
  if (leaves.length) {
    arbs.push({
      weight: 6,
      arbitrary: fc.constantFrom(...leaves).chain((p) => invalidOf(p.schema, r).map((value): BodyMutation => ({ op: 'set', path: p.path, value }))),
    });
    arbs.push({
      weight: 3,
      arbitrary: fc.constantFrom(...leaves).chain((p) => validOf(p.schema, r).map((value): BodyMutation => ({ op: 'set', path: p.path, value }))),
    });
    arbs.push({ weight: 2, arbitrary: fc.constantFrom(...leaves).map((p): BodyMutation => ({ op: 'delete', path: p.path })) });
    arbs.push({ weight: 1, arbitrary: fc.constantFrom(...leaves).map((p): BodyMutation => ({ op: 'set', path: p.path, value: null })) });
  }
  if (objects.length) {
    const anyValue = fc.oneof(anyJson, fc.constantFrom(...OPERATORS), fc.constant(null));
    arbs.push({
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...objects), extraKey, anyValue).map(([p, key, value]): BodyMutation => ({ op: 'extra', path: p.path, key, value })),
    });
    const keyed = objects.flatMap((o) => Object.keys((resolve(o.schema, r).properties ?? {}) as object).map((key) => ({ path: o.path, key })));
    if (keyed.length)
      arbs.push({
        weight: 2,
        arbitrary: fc
          .tuple(
            fc.constantFrom(...keyed),
            fc.oneof(
              anyValue,
              fc.integer({ min: 600, max: 5000 }).map((n) => 'x'.repeat(n)),
            ),
          )
          .map(([k, first]): BodyMutation => ({ op: 'dupkey', path: k.path, key: k.key, first })),
      });
  }
  return fc.oneof(...arbs);
}

/** Objects of a body that get a key written twice: the key, and the value written first. */
type Dups = Map<object, { key: string; first: unknown }[]>;

/** A copy of a generated value; `Deep` markers kept (structuredClone would make them plain objects). */
function copyOf(v: unknown): unknown {
  if (v instanceof Deep || !v || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(copyOf);
  // Object.fromEntries defines an own `__proto__` key, as the generated value had.
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copyOf(x)]));
}

/**
 * Applies mutations to a copy of `body`; returns the copy and the keys to write twice. Each value
 * enters the body as a copy: fast-check's constants (the operator objects) are one instance, which
 * two mutations of a request may both place (a cycle), and which a later mutation would alter for
 * every request after it.
 */
export function applyMutations(body: unknown, mutations: BodyMutation[]): { value: unknown; dups: Dups } {
  let value = copyOf(body);
  const dups: Dups = new Map();
  // The container at `path` (created where missing, as an object or an array by the next key).
  const at = (path: string[], create: boolean): unknown => {
    let o = value;
    for (let i = 0; i < path.length; i++) {
      if (!o || typeof o !== 'object') return undefined;
      const rec = o as Record<string, unknown>;
      if (!rec[path[i]] || typeof rec[path[i]] !== 'object') {
        if (!create) return undefined;
        rec[path[i]] = /^\d+$/.test(path[i + 1] ?? '') ? [] : {};
      }
      o = rec[path[i]];
    }
    return o;
  };
  for (const m of mutations) {
    if (m.op === 'replace') {
      value = copyOf(m.value);
      continue;
    }
    if (m.op === 'set' && m.path.length === 0) {
      value = copyOf(m.value);
      continue;
    }
    if (m.op === 'set' || m.op === 'delete') {
      const parent = at(m.path.slice(0, -1), m.op === 'set');
      const key = m.path[m.path.length - 1];
      if (!parent || typeof parent !== 'object') continue;
      if (m.op === 'set') (parent as Record<string, unknown>)[key] = copyOf(m.value);
      else if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete (parent as Record<string, unknown>)[key];
      continue;
    }
    const target = at(m.path, true);
    if (!target || typeof target !== 'object' || Array.isArray(target)) continue;
    if (m.op === 'extra') {
      // An own property even for `__proto__` (an assignment would set the prototype instead).
      Object.defineProperty(target, m.key, { value: copyOf(m.value), enumerable: true, configurable: true, writable: true });
    } else if (m.key in target) {
      dups.set(target, [...(dups.get(target) ?? []), { key: m.key, first: copyOf(m.first) }]);
    }
  }
  // A key a later mutation deleted is not in the body any more: its doubled (odd) value goes with it,
  // or the text would carry the key once with a value the verdict never saw.
  for (const [target, entries] of dups) {
    const still = entries.filter((d) => Object.hasOwn(target, d.key));
    if (still.length) dups.set(target, still);
    else dups.delete(target);
  }
  return { value, dups };
}

/** JSON text of a value, with `Deep` markers expanded and the keys in `dups` written twice (first the odd value). Iterative. */
export function toJsonText(value: unknown, dups: Dups = new Map()): string {
  const out: string[] = [];
  const stack: unknown[] = [value];
  const RAW = Symbol('raw');
  while (stack.length) {
    const v = stack.pop();
    if (v && typeof v === 'object' && RAW in v) {
      out.push((v as { [RAW]: string })[RAW]);
    } else if (v instanceof Deep) {
      out.push(`${'{"a":'.repeat(v.levels)}1${'}'.repeat(v.levels)}`);
    } else if (Array.isArray(v)) {
      const parts: unknown[] = [{ [RAW]: '[' }];
      v.forEach((x, i) => parts.push(...(i ? [{ [RAW]: ',' }] : []), x === undefined ? null : x));
      parts.push({ [RAW]: ']' });
      stack.push(...parts.reverse());
    } else if (v && typeof v === 'object') {
      const entries: [string, unknown][] = [
        ...(dups.get(v) ?? []).map((d): [string, unknown] => [d.key, d.first]),
        ...Object.entries(v).filter(([, x]) => x !== undefined),
      ];
      const parts: unknown[] = [{ [RAW]: '{' }];
      entries.forEach(([k, x], i) => parts.push({ [RAW]: `${i ? ',' : ''}${JSON.stringify(k)}:` }, x));
      parts.push({ [RAW]: '}' });
      stack.push(...parts.reverse());
    } else {
      out.push(JSON.stringify(v) ?? 'null');
    }
  }
  return out.join('');
}
