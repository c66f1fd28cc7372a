import { existsSync, readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import winston from 'winston';
import { Connection, connectDb, ensureIndexes } from '@smartlock/db';
import { createDeadLetters, DeadLetterError, DeadLetterFilter, DeadLetterView, operationModel, OperationView, Progress } from '@smartlock/dead-letters';

/**
 * Dead letters from a terminal, on the same code as the admin routes (/admin/v1/dead-letters):
 * libs/dead-letters, against the broker (AMQP_URL) and, for replays, purges and their history, the
 * database where they are recorded (admin-api's: MONGO_URL, MONGO_DB). `--json` prints what the
 * admin API answers.
 */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Raw text on stderr (a progress bar redrawn in place). */
  progress: (text: string) => void;
  /** Whether stderr is a terminal: a redrawn bar there, one line per batch otherwise (logs, CI). */
  isTTY: boolean;
}

const USAGE = `usage: node dist/tools/dlq.js <command> [options]   (or: npm run -s dlq -- ...)

Commands
  queues                                  every dead-letter queue: depth, age of the oldest message
  list <queue> [filters] [--limit <n>]    dead letters of <queue>.dlq, oldest first, with why they failed
                                          (read and handed back: nothing is taken away)
  replay <queue> --all                    every dead letter back to <queue>, retry_count 0
  replay <queue> --id <id> [--id <id>]... those messages (message id or event id)
  replay <queue> [filters]                the dead letters the filters choose
  purge <queue> --yes-purge <queue>.dlq   drop every dead letter of <queue> (the name, typed out, confirms)
  history [--queue <queue>] [--action replay|purge] [--limit <n>] [--page <n>]
                                          recorded replays and purges, newest first
  show <operationId>                      one recorded replay or purge (progress while it runs)

<queue> is a work queue (provisioning-worker.booking-events) or its dead-letter queue (….dlq).
Filters: --company <company_id>  --reason <part of the reason>  --reference <reference_id>
         --older-than <duration>  --newer-than <duration>  (durations: 90s, 30m, 2h, 7d)
Options: --json (print the admin API's JSON on stdout)  --operator <name> (recorded as who;
         env DLQ_OPERATOR, default user@host)  -h, --help
Booking events replayed from provisioning-worker.booking-events are set back to QUEUED first.
Progress of a replay goes to stderr.

Environment: AMQP_URL (else .data/infra.env, else amqp://guest:guest@127.0.0.1:5672);
  MONGO_URL (else .data/infra.env, else mongodb://127.0.0.1:27017) and MONGO_DB (default
  smartlock_identity, admin-api's database) for replay, purge, history and show.
Exit codes: 0 done, 1 not found, refused or unreachable, 2 bad usage.`;

class UsageError extends Error {}

/** A variable from the environment, else from the file the infrastructure script writes, else the default. */
function setting(env: NodeJS.ProcessEnv, name: string, fallback: string, infraEnvFile = '.data/infra.env'): string {
  if (env[name]) return env[name] as string;
  if (existsSync(infraEnvFile)) {
    const line = readFileSync(infraEnvFile, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${name}=`));
    if (line)
      return line
        .slice(name.length + 1)
        .trim()
        .replace(/^["']|["']$/g, '');
  }
  return fallback;
}

const OPTIONS = {
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  all: { type: 'boolean', default: false },
  id: { type: 'string', multiple: true },
  company: { type: 'string' },
  reason: { type: 'string' },
  reference: { type: 'string' },
  'older-than': { type: 'string' },
  'newer-than': { type: 'string' },
  limit: { type: 'string' },
  page: { type: 'string' },
  queue: { type: 'string' },
  action: { type: 'string' },
  operator: { type: 'string' },
  'yes-purge': { type: 'string' },
} as const;

const positiveInt = (value: string | undefined, name: string, max: number): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) throw new UsageError(`--${name} must be a whole number from 1 to ${max}`);
  return Number(value);
};

const ago = (seconds: number | null) => {
  if (seconds === null) return '-';
  const units: [number, string][] = [
    [86_400, 'd'],
    [3600, 'h'],
    [60, 'm'],
    [1, 's'],
  ];
  const parts = units
    .filter(([u]) => seconds >= u)
    .slice(0, 2)
    .map(([u, s], i, all) => `${i === 0 ? Math.floor(seconds / u) : Math.floor((seconds % all[0][0]) / u)}${s}`);
  return parts.length ? parts.join(' ') : '0s';
};

function describeMessage(d: DeadLetterView): string {
  return [
    `- message ${d.message_id ?? '(no id)'}  event ${d.event_id ?? '-'}  company ${d.company_id ?? '-'}  reference ${d.reference_id ?? '-'}`,
    `  x-death-reason: ${d.reason ?? '-'}`,
    `  retry_count: ${d.retry_count}  x-original-routing-key: ${d.original_routing_key ?? '-'}`,
    `  x-first-failure-at: ${d.first_failure_at ?? '-'}  x-dead-lettered-at: ${d.dead_lettered_at ?? '-'} (${ago(d.age_seconds)} ago)`,
    `  x-correlation-id: ${d.correlation_id ?? '-'}`,
  ].join('\n');
}

const describeOperation = (o: OperationView) =>
  `${o.started_at}  ${o._id}  ${o.action.padEnd(6)}  ${o.dead_letter_queue}  by ${o.operator} (${o.via})  ${o.status}  ` +
  (o.action === 'purge' ? `purged ${o.counts.purged}` : `replayed ${o.counts.replayed} of ${o.counts.matched} matched (${o.counts.scanned} read)`) +
  (o.error ? `  error: ${o.error}` : '');

/** A bar redrawn in place on a terminal; a line per report elsewhere. */
function progressReporter(io: Io): { report: (p: Progress) => void; end: () => void } {
  let drawn = false;
  return {
    report(p) {
      const width = 30;
      const filled = p.total ? Math.round((width * p.done) / p.total) : width;
      const line = `${p.phase === 'scan' ? 'reading  ' : 'replaying'} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.done}/${p.total}`;
      if (io.isTTY) {
        io.progress(`\r${line}`);
        drawn = true;
      } else io.err(line);
    },
    end() {
      if (drawn) io.progress('\n');
    },
  };
}

export async function run(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  let db: Connection | undefined;
  try {
    const { values: o, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    const [command, arg, ...extra] = positionals;
    if (o.help) {
      io.out(USAGE);
      return 0;
    }
    const needsArg = ['list', 'replay', 'purge', 'show'].includes(command);
    if (!['queues', 'list', 'replay', 'purge', 'history', 'show'].includes(command) || (needsArg && !arg) || (!needsArg && arg) || extra.length) {
      throw new UsageError(USAGE);
    }
    const filter: DeadLetterFilter = {
      ...(o.company !== undefined && { company_id: o.company }),
      ...(o.reason !== undefined && { reason: o.reason }),
      ...(o.reference !== undefined && { reference_id: o.reference }),
      ...(o['older-than'] !== undefined && { older_than: o['older-than'] }),
      ...(o['newer-than'] !== undefined && { newer_than: o['newer-than'] }),
      ...(o.id?.length && { ids: o.id }),
    };
    const print = (value: unknown, text: () => void) => (o.json ? io.out(JSON.stringify(value, null, 2)) : text());
    const dl = createDeadLetters({
      amqpUrl: setting(env, 'AMQP_URL', 'amqp://guest:guest@127.0.0.1:5672'),
      connectionName: `dlq (${userInfo().username}@${hostname()})`,
      db: async () => {
        if (!db) {
          // Errors only, on stderr (stdout is the answer): an unreachable database fails the command with its reason.
          const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Stream({ stream: process.stderr })] });
          db = await connectDb({
            url: setting(env, 'MONGO_URL', 'mongodb://127.0.0.1:27017'),
            dbName: env.MONGO_DB || 'smartlock_identity',
            logger,
            connectTimeoutMs: 5000,
          });
          await ensureIndexes([operationModel(db)]);
        }
        return db;
      },
    });
    const actor = { operator: o.operator ?? env.DLQ_OPERATOR ?? `${userInfo().username}@${hostname()}`, via: 'cli' as const };

    switch (command) {
      case 'queues': {
        const queues = await dl.queues();
        print(queues, () => {
          const w = Math.max(...queues.map((q) => q.dead_letter_queue.length));
          io.out(`${'DEAD-LETTER QUEUE'.padEnd(w)}  ${'DEPTH'.padStart(6)}  OLDEST`);
          for (const q of queues)
            io.out(`${q.dead_letter_queue.padEnd(w)}  ${String(q.depth).padStart(6)}  ${q.declared ? ago(q.oldest_age_seconds) : '(not declared yet)'}`);
        });
        return 0;
      }
      case 'list': {
        const listing = await dl.list(arg, filter, positiveInt(o.limit, 'limit', 10_000));
        print(listing, () => {
          io.out(
            `${listing.matched} message(s) in ${listing.dead_letter_queue}${listing.matched === listing.depth ? '' : ` match (of ${listing.depth})`}${listing.messages.length < listing.matched ? `, the first ${listing.messages.length} shown` : ''}`,
          );
          for (const d of listing.messages) io.out(describeMessage(d));
        });
        return 0;
      }
      case 'replay': {
        const progress = progressReporter(io);
        const result = await dl.replay(arg, { all: o.all || undefined, filter }, actor, progress.report).finally(progress.end);
        if (filter.ids?.length && result.not_found_ids.length === filter.ids.length) {
          io.err(`no message ${filter.ids.join(', ')} in ${result.dead_letter_queue}`);
          return 1;
        }
        print(result, () => {
          io.out(
            `replayed ${result.replayed} message(s) from ${result.dead_letter_queue} to ${result.queue}${result.replayed ? `: ${result.message_ids.join(', ')}${result.message_ids_truncated ? ', …' : ''}` : ''}`,
          );
          if (result.statuses_queued) io.out(`${result.statuses_queued} booking event(s) set back to QUEUED`);
          if (result.not_found_ids.length) io.out(`not found: ${result.not_found_ids.join(', ')}`);
          io.out(`${result.remaining} left in ${result.dead_letter_queue}; recorded as operation ${result.operation_id}`);
        });
        return 0;
      }
      case 'purge': {
        const result = await dl.purge(arg, o['yes-purge'], actor);
        print(result, () => io.out(`purged ${result.purged} message(s) from ${result.dead_letter_queue}; recorded as operation ${result.operation_id}`));
        return 0;
      }
      case 'history': {
        if (o.action !== undefined && o.action !== 'replay' && o.action !== 'purge') throw new UsageError('--action must be replay or purge');
        const ops = await dl.operations({
          queue: o.queue,
          action: o.action,
          limit: positiveInt(o.limit, 'limit', 1000),
          page: positiveInt(o.page, 'page', 1_000_000),
        });
        print(ops, () => {
          if (!ops.length) io.out('no replay or purge recorded');
          for (const op of ops) io.out(describeOperation(op));
        });
        return 0;
      }
      default: {
        const op = await dl.operation(arg);
        print(op, () => {
          io.out(describeOperation(op));
          if (op.selection) io.out(`  selection: ${JSON.stringify(op.selection)}`);
          if (op.message_ids.length) io.out(`  messages: ${op.message_ids.join(', ')}${op.message_ids_truncated ? ', …' : ''}`);
        });
        return 0;
      }
    }
  } catch (err) {
    if (err instanceof UsageError || (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))) {
      io.err(err.message);
      return 2;
    }
    if (err instanceof DeadLetterError) {
      io.err(err.message);
      return err.kind === 'invalid' ? 2 : 1;
    }
    io.err(`error: ${(err as Error).message}`);
    return 1;
  } finally {
    await db?.close().catch(() => undefined);
  }
}
