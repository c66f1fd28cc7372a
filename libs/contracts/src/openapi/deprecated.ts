import { DeprecatedFamily, deprecatedFamily } from '../versioning/deprecations';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const day = (iso: string) => iso.slice(0, 10);

const HEADERS = (f: DeprecatedFamily) => ({
  Deprecation: { description: `RFC 9745: deprecated since ${day(f.since)}, as \`@<unix seconds>\`.`, schema: { type: 'string' } },
  Sunset: { description: `RFC 8594: removed after ${day(f.sunset)} (an HTTP date).`, schema: { type: 'string' } },
  Link: { description: `The successor, \`<${f.successorFamily.replace(/^[A-Z]+ /, '')}>; rel="successor-version"\`.`, schema: { type: 'string' } },
});

/**
 * Marks every operation of a deprecated route family (libs/contracts DEPRECATED_FAMILIES) deprecated,
 * says when it goes and what replaces it, and documents the headers on each of its answers: the
 * same table the apps send them from. Copies what it changes (response objects are shared).
 */
export function markDeprecated(document: Record<string, unknown>): Record<string, unknown> {
  const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
  for (const [template, item] of Object.entries(paths)) {
    const family = deprecatedFamily(template);
    if (!family) continue;
    const marked: Record<string, unknown> = { ...item };
    for (const method of METHODS.filter((m) => item[m])) {
      const op = item[method];
      const notice = `**Deprecated** since ${day(family.since)}, removed after ${day(family.sunset)}: use \`${family.successorFamily}\`. Every answer carries \`Deprecation\`, \`Sunset\` and a \`Link\` to the successor.`;
      const responses = Object.entries((op.responses ?? {}) as Record<string, { headers?: Record<string, unknown> }>).map(([status, r]) => [
        status,
        { ...r, headers: { ...r.headers, ...HEADERS(family) } },
      ]);
      marked[method] = {
        ...op,
        deprecated: true,
        description: [notice, op.description].filter(Boolean).join('\n\n'),
        responses: Object.fromEntries(responses),
      };
    }
    paths[template] = marked as Record<string, Record<string, unknown>>;
  }
  return document;
}
