/**
 * The benchmark's baseline: the irreducible work of accepting a booking event, and nothing else. One
 * Express route that parses the JSON body, inserts one document and publishes one message with
 * publisher confirms (the same libs/messaging publisher the gateway uses), then answers 202.
 * No authentication, validation, duplicate check, sequence, status update, logging or metrics.
 *
 * Bundled and started by bench/ingest/run.mjs: env PORT, MONGO_URL, MONGO_DB, AMQP_URL.
 */
import express from 'express';
import { randomUUID } from 'node:crypto';
import { connectDb } from '@smartlock/db';
import { EXCHANGES, createBroker } from '@smartlock/messaging';
import { createLogger } from '@smartlock/observability';

async function main() {
  const logger = createLogger({ service: 'bench-baseline', level: 'warn' });
  const db = await connectDb({ url: process.env.MONGO_URL as string, dbName: process.env.MONGO_DB as string, logger });
  const collection = db.collection('baseline_events');
  const broker = createBroker({ url: process.env.AMQP_URL as string, logger, connectionName: 'bench baseline' });
  await broker.declareExchanges([EXCHANGES.bookingEvents]);
  await broker.connect();

  const app = express();
  app.use(express.json({ limit: '256kb' }));
  app.post('/baseline', async (req, res) => {
    try {
      const id = randomUUID();
      await collection.insertOne({ _id: id as never, body: req.body, received_at: new Date() });
      await broker.publish(EXCHANGES.bookingEvents.name, 'booking.booking_create', { event_id: id, ...req.body }, { headers: { 'x-event-id': id } });
      res.status(202).json({ success: true, eventId: id, status: 'QUEUED' });
    } catch (err) {
      res.status(503).json({ success: false, errors: [(err as Error).message] });
    }
  });
  const server = app.listen(Number(process.env.PORT), () => process.stdout.write(`baseline listening on ${process.env.PORT}\n`));
  server.keepAliveTimeout = 65_000;
  process.on('SIGTERM', () => {
    server.close();
    void broker
      .close(1000)
      .then(() => db.close())
      .then(() => process.exit(0));
  });
}

main().catch((err) => {
  process.stderr.write(`baseline failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
