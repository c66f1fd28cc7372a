/** An OpenAPI document, as the builders make it. */
export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

export interface DocumentedOperation {
  /** The path template, e.g. `/webhook/events/{eventId}`. */
  template: string;
  method: string;
  operation: Record<string, unknown>;
  /** The values of the template's parameters in the matched path. */
  params: Record<string, string>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

const segments = (path: string) => path.replace(/\/+$/, '').split('/').slice(1);
const isTemplateParam = (s: string) => /^\{[^}]+\}$/.test(s);

/**
 * The operation of `method` and a concrete request path, or undefined when the document has none. A
 * literal segment wins over a parameter (`/location/external-ids` over `/location/{x}`).
 */
export function findOperation(doc: OpenApiDocument, method: string, path: string): DocumentedOperation | undefined {
  const wanted = segments(path.split('?')[0]);
  let best: { op: DocumentedOperation; literals: number } | undefined;
  for (const [template, item] of Object.entries(doc.paths)) {
    const operation = item[method.toLowerCase()] as Record<string, unknown> | undefined;
    if (!operation) continue;
    const parts = segments(template);
    if (parts.length !== wanted.length) continue;
    const params: Record<string, string> = {};
    let literals = 0;
    const matches = parts.every((p, i) => {
      if (isTemplateParam(p)) {
        params[p.slice(1, -1)] = decodeURIComponent(wanted[i]);
        return wanted[i] !== '';
      }
      literals++;
      return p === wanted[i];
    });
    if (matches && (!best || literals > best.literals)) best = { op: { template, method: method.toLowerCase(), operation, params }, literals };
  }
  return best?.op;
}

/**
 * Whether an Express route (`/api/v4/location/:levels`) is in the document: some operation of that
 * method whose template fits it, an Express parameter standing for any segment.
 */
export function routeDocumented(doc: OpenApiDocument, method: string, route: string): boolean {
  const wanted = segments(route);
  return Object.entries(doc.paths).some(([template, item]) => {
    if (!item[method.toLowerCase()]) return false;
    const parts = segments(template);
    return parts.length === wanted.length && parts.every((p, i) => isTemplateParam(p) || wanted[i].startsWith(':') || p === wanted[i]);
  });
}

/** Every method and template of the document. */
export function operationsOf(doc: OpenApiDocument): { method: string; template: string }[] {
  return Object.entries(doc.paths).flatMap(([template, item]) => METHODS.filter((m) => item[m]).map((method) => ({ method, template })));
}
