import { DEPRECATED_FAMILIES } from '../versioning/deprecations';
import { apiDocument } from './index';

describe('the deprecated route families in the API document', () => {
  const paths = apiDocument().paths as Record<
    string,
    Record<string, { deprecated?: boolean; responses: Record<string, { headers?: Record<string, unknown> }> }>
  >;
  const ops = (filter: (template: string) => boolean) =>
    Object.entries(paths)
      .filter(([template]) => filter(template))
      .flatMap(([template, item]) => Object.entries(item).map(([method, op]) => ({ at: `${method.toUpperCase()} ${template}`, op })));
  const deprecated = (template: string) => DEPRECATED_FAMILIES.some((f) => f.pattern.test(template));

  it('marks every operation of v2 booking access, v3 lock data and v3 locations deprecated, each answer with Deprecation, Sunset and Link', () => {
    const marked = ops(deprecated);
    expect(marked.map((m) => m.at)).toEqual(
      expect.arrayContaining([
        'GET /api/v2/booking/access',
        'GET /api/v3/booking/getLockData/{referenceId}',
        'GET /api/v3/location/all',
        'PATCH /api/v3/location/rooms/{id}',
      ]),
    );
    for (const { at, op } of marked) {
      expect({ at, deprecated: op.deprecated }).toEqual({ at, deprecated: true });
      for (const [status, r] of Object.entries(op.responses))
        expect({ at, status, headers: Object.keys(r.headers ?? {}) }).toEqual({
          at,
          status,
          headers: expect.arrayContaining(['Deprecation', 'Sunset', 'Link']),
        });
    }
  });

  it('leaves v4 and the employee access of v3 (which has no successor yet) current', () => {
    const current = ops((t) => !deprecated(t) && /^\/api\//.test(t));
    expect(current.map((c) => c.at)).toEqual(
      expect.arrayContaining(['GET /api/v4/location/all', 'GET /api/v4/bookings/{referenceId}/access', 'POST /api/v3/access/employee']),
    );
    for (const { at, op } of current) expect({ at, deprecated: op.deprecated ?? false }).toEqual({ at, deprecated: false });
  });
});
