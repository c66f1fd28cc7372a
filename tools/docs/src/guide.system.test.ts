import { launchSystem, System } from '@smartlock/testing';
import { renderGuide } from './guide';

describe('docs/integration-guide.md, generated against the running system', () => {
  let sys: System;
  beforeAll(async () => {
    sys = await launchSystem();
  }, 180_000);
  afterAll(async () => {
    await sys?.stop();
  });

  it('walks the loop with real requests and answers, every secret masked', async () => {
    const guide = await renderGuide({ baseUrl: sys.baseUrl, webhookUrl: sys.webhookUrl, adminToken: sys.adminToken, wait: { timeoutMs: 30_000 } });
    for (const step of [
      '## 1. Map the locations',
      '## 2. Create a booking',
      '## 3. Poll the event',
      '## 4. Retrieve the credential',
      '## Versioning and deprecation',
      '## Errors',
    ])
      expect(guide).toContain(step);
    expect(guide).toContain('GET /api/v4/location/all');
    expect(guide).toMatch(/POST \/webhook\/t\/<ingest token>\n/);
    expect(guide).toContain('HTTP/1.1 202 Accepted');
    expect(guide).toContain('"status": "COMPLETED"');
    // the v2 answer's deprecation headers, as sent
    expect(guide).toMatch(
      /deprecation: @\d+\nlink: <\/api\/v3\/booking\/getLockData\/GUIDE-\d+>; rel="successor-version"\nsunset: Wed, 30 Jun 2027 00:00:00 GMT\n/,
    );
    expect(guide).toContain('"reference_id is required"');
    // no credential of any kind: the key, the token, the admin token, lock data, passcodes
    expect(guide).not.toMatch(/slk_|e2e-admin-token|"lockData": "(?!<)|"passcode": "(?!<)/);
    expect(guide).toContain('apikey: <API key>');
    expect(guide).toContain('authorization: Bearer <ADMIN_TOKEN>');
  });
});
