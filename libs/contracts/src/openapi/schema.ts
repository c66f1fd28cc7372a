import type Joi from 'joi';
import parse from 'joi-to-json';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as a plain object. */
export type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema of a joi schema an app validates with: the document is generated from the very
 * object that validates requests, never from a copy of it.
 */
export function fromJoi(schema: Joi.Schema): JsonSchema {
  return parse(schema, 'open-api-3.1') as JsonSchema;
}

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const str = (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', ...extra });
export const int = (extra: JsonSchema = {}): JsonSchema => ({ type: 'integer', ...extra });
export const bool = (extra: JsonSchema = {}): JsonSchema => ({ type: 'boolean', ...extra });
export const dateTime = (extra: JsonSchema = {}): JsonSchema => str({ format: 'date-time', ...extra });
export const oneOf = (values: readonly (string | number | boolean)[], extra: JsonSchema = {}): JsonSchema => ({ enum: [...values], ...extra });
export const constant = (value: unknown): JsonSchema => ({ const: value });
export const arr = (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: 'array', items, ...extra });

/** `schema` or null. */
export function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

/**
 * A closed object: every property listed is required unless named in `optional`, and no other
 * property may appear, so a response that gains, loses or renames a field no longer matches.
 */
export function obj(properties: Record<string, JsonSchema>, optional: string[] = [], extra: JsonSchema = {}): JsonSchema {
  return {
    type: 'object',
    properties,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    additionalProperties: false,
    ...extra,
  };
}

/** A regular expression as a JSON Schema `pattern` (ECMA-262 syntax, which both use). */
export const pattern = (re: RegExp, extra: JsonSchema = {}): JsonSchema => str({ pattern: re.source, ...extra });
