import { describeError, seed } from './seed';

// `npm start` runs this once everything is ready: demo data for integrators, printed.
const baseUrl = process.env.SMARTLOCK_URL ?? 'http://127.0.0.1:8080';
const webhookUrl = process.env.SMARTLOCK_WEBHOOK_URL ?? 'http://127.0.0.1:8090';
// The simulator is Nuki's Web API in development (npm start): the demo Nuki account is made there.
const simulatorUrl = process.env.NUKI_API_URL ?? process.env.LOCK_CLOUD_URL ?? 'http://127.0.0.1:8086';
seed({ baseUrl, adminToken: process.env.ADMIN_TOKEN ?? 'dev-admin-token', simulatorUrl }).then(
  (r) => {
    if (process.argv.includes('--json')) {
      process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      return;
    }
    process.stdout.write(
      [
        '',
        `Demo data (${r.company.reused ? 'existing' : 'new'} company; a new key and ingest token each run, shown once):`,
        `  company       ${r.company.name}  _id ${r.company._id}`,
        `  API key       ${r.apiKey.key}`,
        `                curl -H 'apikey: ${r.apiKey.key}' ${baseUrl}/admin/v1/keys/current`,
        `  layout        ${r.site.name} (_id ${r.site._id}): rooms 101-104 (door locks), room 105 (a Nuki door lock), room 201 with beds A and B (door and cabinet locks)`,
        `  Nuki account  ${r.nuki.account_id}: the company's own, its smartlock ${r.nuki.lock_id} on room 105 (portal: Locks)`,
        `  ingest URL    ${webhookUrl}${r.ingestToken.path}   (provider ${r.ingestToken.provider})`,
        '',
        'Try a booking, then its status and its credentials:',
        `  curl -s -X POST ${webhookUrl}${r.ingestToken.path} -H 'Content-Type: application/json' \\`,
        `    -d '{"reference_id":"DEMO-1","action":"create","room_number":"101","check_in":"2030-01-10T15:00:00Z","check_out":"2030-01-12T11:00:00Z","access_type":["EKEY","PASSCODE"]}'`,
        `  curl -s -H 'apikey: ${r.apiKey.key}' ${webhookUrl}/webhook/events/reference/DEMO-1`,
        `  curl -s -H 'apikey: ${r.apiKey.key}' ${baseUrl}/api/v4/bookings/DEMO-1/access`,
        '',
      ].join('\n'),
    );
  },
  (err) => {
    process.stderr.write(`seed: ${describeError(err, baseUrl)}\n`);
    process.exitCode = 1;
  },
);
