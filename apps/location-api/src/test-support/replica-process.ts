/*
 * A stand-in for a consuming app (provisioning-worker, access-api) in the replica test: a separate
 * process that keeps a layout replica from location.events and rebuilds from location-api's snapshot.
 * Built with esbuild by replica.test.ts; never part of location-api's bundle.
 */
import { connectDb, ensureIndexes } from '@smartlock/db';
import { createLayoutReplica, httpSnapshotFetcher } from '@smartlock/layout';
import { QUEUES, createBroker } from '@smartlock/messaging';
import { createLogger } from '@smartlock/observability';

async function main() {
  const env = process.env as Record<string, string>;
  const logger = createLogger({ service: 'replica-process', level: 'info' });
  const db = await connectDb({ url: env.MONGO_URL, dbName: env.MONGO_DB, logger });
  const broker = createBroker({ url: env.AMQP_URL, logger, connectionName: `replica-process ${process.pid}` });
  const replica = createLayoutReplica({ db, broker, logger, fetchSnapshot: httpSnapshotFetcher(env.LOCATION_API_URL, env.ADMIN_TOKEN), gapGraceMs: 500 });
  await ensureIndexes(replica.models);
  await replica.consume(QUEUES.accessApiLocationEvents, { prefetch: 10 });
  await broker.connect();
  logger.info('replica ready');
  const stop = async () => {
    replica.stop();
    await broker.close(5000);
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
