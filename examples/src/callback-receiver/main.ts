import { callbackReceiver } from './receiver';
import { Journal } from './journal';

// node dist/examples/callback-receiver.js, with CALLBACK_SECRET (and CALLBACK_PREVIOUS_SECRET during
// a rotation), PORT (default 3000) and JOURNAL (default ./callbacks.jsonl).
async function main() {
  const secret = process.env.CALLBACK_SECRET;
  if (!secret) throw new Error('CALLBACK_SECRET is required (the secret shown when the callback was set)');
  const journal = await Journal.open(process.env.JOURNAL ?? 'callbacks.jsonl');
  const app = callbackReceiver({ secret, previousSecret: process.env.CALLBACK_PREVIOUS_SECRET || undefined, journal });
  const port = Number(process.env.PORT ?? 3000);
  app.listen(port, () => console.log(`callback receiver on http://127.0.0.1:${port}/callbacks, journal ${journal.path}`));
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exitCode = 1;
});
