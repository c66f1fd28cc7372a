import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { AuthErrors, IngestSpecErrors } from '@smartlock/contracts';
import { ERRORS_DOC, renderErrorsDoc } from './errors-doc';

const ROOT = path.resolve(__dirname, '../../..');

describe('docs/errors.md', () => {
  it("is what the code's constants generate (else: npm run build && npm run docs -- errors)", async () => {
    expect(await readFile(path.join(ROOT, ERRORS_DOC.file), 'utf8')).toBe(renderErrorsDoc());
  });

  it("lists SPEC's strings with their statuses and codes, and the messages made from values with placeholders", () => {
    const doc = renderErrorsDoc();
    expect(doc).toContain(`| \`${AuthErrors.revoked}\` | 401 | 4010 |`);
    expect(doc).toContain(`| \`${AuthErrors.companyMismatch}\` | 403 | 4030 |`);
    for (const s of Object.values(IngestSpecErrors)) expect(doc).toContain(`| \`${s}\` | 400 |`);
    expect(doc).toContain('| `Room not found` | FAILED |');
    expect(doc).toContain('| `<field> must be a string` | 400 |');
    expect(doc).toContain('| 7010 | LOCATIONS_RETRIEVED | `GET /api/v4/location/all`, `GET /api/v3/location/all` |');
    expect(doc).toContain('| 4290 | 429 | TOO_MANY_REQUESTS |');
  });
});
