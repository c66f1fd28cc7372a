import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CONFIGURATION_DOC, loadSchemas, renderConfiguration, variables } from './configuration-doc';

const ROOT = path.resolve(__dirname, '../../..');

describe('docs/configuration.md', () => {
  it("is what the apps' config schemas generate (else: npm run build && npm run docs -- configuration)", async () => {
    expect(await readFile(path.join(ROOT, CONFIGURATION_DOC.file), 'utf8')).toBe(renderConfiguration(await loadSchemas()));
  });

  it('gives every variable of every schema a meaning', async () => {
    const undescribed = variables(await loadSchemas())
      .filter((v) => !v.meaning)
      .map((v) => `${v.name} (${v.apps.join(', ')})`);
    expect(undescribed).toEqual([]);
  });

  it('shows defaults that depend on NODE_ENV, per-app defaults, and variables required outside development', async () => {
    const doc = renderConfiguration(await loadSchemas());
    expect(doc).toContain('| `AMQP_URL` | all but edge |');
    expect(doc).toContain('`dev-admin-token` when NODE_ENV is development or test; otherwise required');
    expect(doc).toContain('| `PORT` | all | ingest-gateway: `8090`; location-api: `8081`;');
    expect(doc).toContain('| `SMS_FROM` | callback-dispatcher | required when SMS_API_URL is set; otherwise unset |');
    expect(doc).toContain('| `CALLBACK_SECRET_OVERLAP_MS` | admin-api | `86400000` (24 h) |');
    expect(doc).toContain('| `PUBLISH_RETRY_DELAYS_MS` | ingest-gateway | `5000,30000,120000` |');
    expect(doc).toContain('| `PORTAL_DIR` | admin-api | computed at start |');
  });
});
