import winston from 'winston';
import { redact, isSecretKey, REDACTED } from './redact';

export type Logger = winston.Logger;

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Human-readable lines for a developer's terminal; JSON otherwise. */
  pretty?: boolean;
  /** Extra transport, used by tests that assert on what was logged. */
  stream?: NodeJS.WritableStream;
}

const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === 'level' || key === 'message') continue;
    const value = info[key];
    info[key] = isSecretKey(key) && value !== undefined && value !== null ? REDACTED : redact(value);
  }
  return info;
});

/** Errors keep their stack and cause chain in the JSON line. */
const errorFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    const value = info[key];
    if (value instanceof Error) info[key] = serializeError(value);
  }
  return info;
});

function serializeError(err: Error, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = { name: err.name, message: err.message, stack: err.stack };
  const code = (err as { code?: unknown }).code;
  if (code !== undefined) out.code = code;
  if (err.cause instanceof Error && depth < 3) out.cause = serializeError(err.cause, depth + 1);
  return out;
}

export function createLogger(opts: LoggerOptions): Logger {
  const base = [errorFormat(), redactFormat(), winston.format.timestamp()];
  const format = opts.pretty
    ? winston.format.combine(...base, winston.format.colorize(), winston.format.simple())
    : winston.format.combine(...base, winston.format.json());
  const transports: winston.transport[] = [new winston.transports.Console({ stderrLevels: [] })];
  if (opts.stream) transports.push(new winston.transports.Stream({ stream: opts.stream }));
  return winston.createLogger({
    level: opts.level ?? 'info',
    defaultMeta: { service: opts.service },
    format,
    transports,
  });
}
