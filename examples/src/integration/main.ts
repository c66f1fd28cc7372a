import { apiClient, ingestClient } from '@smartlock/client';
import { bookAndRetrieve } from './integrate';

// node dist/examples/integration.js, with SMARTLOCK_API_KEY and INGEST_TOKEN (npm start prints both),
// SMARTLOCK_URL ({base_url}, default http://127.0.0.1:8080) and WEBHOOK_URL ({webhook_url}, default
// http://127.0.0.1:8090).
async function main() {
  const apikey = process.env.SMARTLOCK_API_KEY;
  const token = process.env.INGEST_TOKEN;
  if (!apikey || !token) throw new Error('SMARTLOCK_API_KEY and INGEST_TOKEN are required');
  const api = apiClient(process.env.SMARTLOCK_URL ?? 'http://127.0.0.1:8080', { apikey });
  const ingest = ingestClient(process.env.WEBHOOK_URL ?? 'http://127.0.0.1:8090', { apikey });
  const checkIn = new Date(Date.now() + 86_400_000);
  const checkOut = new Date(checkIn.getTime() + 2 * 86_400_000);
  await bookAndRetrieve(
    { api, ingest, token, log: (line) => console.log(line) },
    {
      reference_id: `EXAMPLE-${Date.now()}`,
      check_in: checkIn.toISOString(),
      check_out: checkOut.toISOString(),
      guest: { name: 'Example Guest', email: 'guest@example.com' },
      access_type: ['EKEY', 'PASSCODE'],
    },
  );
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exitCode = 1;
});
