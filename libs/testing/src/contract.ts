import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { AxiosError, AxiosInstance, AxiosResponse, AxiosStatic, InternalAxiosRequestConfig } from 'axios';
import { OpenApiDocument, findOperation } from '@smartlock/contracts';

/**
 * The contract enforced on the running system: every response from a registered host is checked
 * against that host's OpenAPI document, and so is every request body the host accepted (2xx). A
 * mismatch names the method, the path, the status and the field.
 */

// Joi's isoDate, which the request schemas use, accepts a date alone as well as a date-time.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

interface Checker {
  doc: OpenApiDocument;
  ajv: Ajv2020;
  compiled: Map<string, ValidateFunction>;
}

const hosts = new Map<string, Checker>();

/** Checks every exchange with `origin` (e.g. a launched system's base URL) against `doc`. */
export function registerContractHost(origin: string, doc: OpenApiDocument): void {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat('date-time', ISO_DATE);
  ajv.addSchema(doc as object, 'doc');
  hosts.set(new URL(origin).origin, { doc, ajv, compiled: new Map() });
}

export function unregisterContractHost(origin: string): void {
  hosts.delete(new URL(origin).origin);
}

const pointer = (parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

function validator(c: Checker, parts: string[]): ValidateFunction {
  const at = `doc#/${pointer(parts)}`;
  let v = c.compiled.get(at);
  if (!v) {
    v = c.ajv.compile({ $ref: at });
    c.compiled.set(at, v);
  }
  return v;
}

export const schemaErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? [])
    .slice(0, 5)
    .map(
      (e) =>
        `${e.instancePath || '(body)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}${e.params && 'allowedValues' in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`,
    )
    .join('; ');

export interface Exchange {
  method: string;
  url: string;
  status: number;
  requestBody?: unknown;
  responseBody: unknown;
  contentType?: string;
}

/** What does not match the document in one exchange (empty when all does, or the host is not registered). */
export function contractViolations(x: Exchange): string[] {
  const url = new URL(x.url);
  const c = hosts.get(url.origin);
  if (!c) return [];
  const op = findOperation(c.doc, x.method, url.pathname);
  // A path the document lacks is answered 404 by the apps: nothing to check it against.
  if (!op) return [];
  return operationViolations(c, op.template, op.method, x);
}

/**
 * What does not match the document in an exchange of one operation (by its template: a request the
 * fuzz made for that operation, whatever its path parameters look like).
 */
export function exchangeViolations(template: string, x: Exchange): string[] {
  const c = hosts.get(new URL(x.url).origin);
  if (!c) throw new Error(`no contract registered for ${new URL(x.url).origin}`);
  return operationViolations(c, template, x.method.toLowerCase(), x);
}

/** A validator of one schema of a registered host's document, e.g. `['paths', template, 'post', 'requestBody', …, 'schema']`. */
export function documentValidator(origin: string, parts: string[]): ValidateFunction {
  const c = hosts.get(new URL(origin).origin);
  if (!c) throw new Error(`no contract registered for ${origin}`);
  return validator(c, parts);
}

function operationViolations(c: Checker, template: string, method: string, x: Exchange): string[] {
  const operation = c.doc.paths[template]?.[method] as Record<string, unknown> | undefined;
  if (!operation) return [`${method.toUpperCase()} ${template} is not in the document`];
  const label = `${x.method.toUpperCase()} ${template} → ${x.status}`;
  const out: string[] = [];
  const responses = (operation.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>;
  const key = [String(x.status), `${String(x.status)[0]}XX`, 'default'].find((k) => responses[k]);
  if (!key) {
    out.push(`${label}: status ${x.status} is not documented`);
  } else if (responses[key].content?.['application/json'] && x.status !== 304 && x.method.toUpperCase() !== 'HEAD') {
    if (!/json/.test(x.contentType ?? '')) out.push(`${label}: the response is ${x.contentType ?? 'without a type'}, the document says application/json`);
    else {
      const v = validator(c, ['paths', template, method, 'responses', key, 'content', 'application/json', 'schema']);
      if (!v(x.responseBody)) out.push(`${label}: response ${schemaErrors(v.errors)}`);
    }
  }
  const requestBody = operation.requestBody as { content?: Record<string, unknown> } | undefined;
  if (x.status >= 200 && x.status < 300 && requestBody?.content?.['application/json'] && x.requestBody !== undefined) {
    const v = validator(c, ['paths', template, method, 'requestBody', 'content', 'application/json', 'schema']);
    if (!v(x.requestBody)) out.push(`${label}: the host accepted a request body the document refuses: ${schemaErrors(v.errors)}`);
  }
  return out;
}

/**
 * The routes a launched app serves, from its `service started` log line (libs/http), as
 * `METHOD /path/:param`.
 */
export function servedRoutes(output: string): string[] {
  for (const line of output.split('\n')) {
    if (!line.includes('"service started"')) continue;
    const entry = JSON.parse(line) as { routes?: string[] };
    if (entry.routes) return entry.routes;
  }
  throw new Error('no "service started" line with routes in the output');
}

function parseBody(data: unknown): unknown {
  if (typeof data !== 'string') return data;
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

function check(axios: AxiosStatic, res: AxiosResponse): AxiosResponse {
  const config = res.config as InternalAxiosRequestConfig;
  const violations = contractViolations({
    method: config.method ?? 'get',
    url: axios.getUri(config),
    status: res.status,
    requestBody: config.data === undefined ? undefined : parseBody(config.data),
    responseBody: res.data,
    contentType: String(res.headers['content-type'] ?? ''),
  });
  if (violations.length) throw new Error(`contract: ${violations.join('\n')}`);
  return res;
}

/**
 * Every axios call of the test process (the default instance and every instance axios.create makes)
 * goes through the check: a response that breaks the contract fails the call that received it.
 */
export function enforceContract(axios: AxiosStatic): void {
  const attach = (instance: AxiosInstance | AxiosStatic) =>
    instance.interceptors.response.use(
      (res) => check(axios, res),
      (err: AxiosError) => {
        if (err.response) check(axios, err.response);
        return Promise.reject(err);
      },
    );
  attach(axios);
  const create = axios.create.bind(axios);
  axios.create = (config) => {
    const instance = create(config);
    attach(instance);
    return instance;
  };
}
