// Removes what killed test runs left on the shared broker and database: RabbitMQ vhosts and
// databases named by libs/testing's uniqueName (`<prefix>_<base36 ms>_<6 hex>`) older than
// TEST_LEFTOVER_MAX_AGE_H hours (6). A run that ends normally removes its own; one that is killed
// leaves them, and a broker recovering hundreds of vhosts takes minutes to boot (2026-12-01's
// incident). Names without that stamp (npm start's `smartlock_*`) are never touched.
// Usage: node scripts/sweep-test-leftovers.mjs <mongo url> <management api url>
import { MongoClient } from 'mongodb';

const [mongoUrl, mgmt] = process.argv.slice(2);
const maxAgeMs = Number(process.env.TEST_LEFTOVER_MAX_AGE_H ?? 6) * 3600_000;
const stamped = /_([0-9a-z]{8})_[0-9a-f]{6}$/;
const stale = (name) => {
  const m = stamped.exec(name);
  return !!m && Date.now() - parseInt(m[1], 36) > maxAgeMs;
};
const auth = `Basic ${Buffer.from('guest:guest').toString('base64')}`;

let vhosts = 0;
let dbs = 0;
try {
  const list = await (await fetch(`${mgmt}/vhosts`, { headers: { authorization: auth } })).json();
  for (const { name } of list) {
    if (!stale(name)) continue;
    const res = await fetch(`${mgmt}/vhosts/${encodeURIComponent(name)}`, { method: 'DELETE', headers: { authorization: auth } });
    if (res.ok) vhosts++;
  }
} catch (err) {
  console.log(`sweep: vhosts not swept (${err.message})`);
}
const client = new MongoClient(mongoUrl, { serverSelectionTimeoutMS: 3000 });
try {
  const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
  for (const { name } of databases) {
    if (!stale(name)) continue;
    await client.db(name).dropDatabase();
    dbs++;
  }
} catch (err) {
  console.log(`sweep: databases not swept (${err.message})`);
} finally {
  await client.close();
}
console.log(`sweep: removed ${vhosts} test vhosts and ${dbs} test databases older than ${maxAgeMs / 3600_000} h`);
