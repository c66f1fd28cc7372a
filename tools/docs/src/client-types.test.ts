import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '../../..');
const exec = promisify(execFile);

// openapi-typescript loads an ES module jest cannot require: the check runs the built tool, as CI would.
describe("libs/client's generated types", () => {
  beforeAll(async () => {
    await exec(process.execPath, ['tools/build.mjs', 'tools/docs'], { cwd: ROOT });
  }, 60_000);

  it('are what the current OpenAPI documents generate (else: npm run build && npm run docs -- client)', async () => {
    const run = await exec(process.execPath, ['dist/tools/docs.js', '--check', 'client'], { cwd: ROOT }).catch(
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect({ code: 'code' in run ? run.code : 0, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toContain('libs/client/src/generated/api-host.ts is current');
    expect(run.stdout).toContain('libs/client/src/generated/ingest-host.ts is current');
  }, 60_000);
});
