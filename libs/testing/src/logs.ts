import { PassThrough } from 'node:stream';
import { createLogger, Logger } from '@smartlock/observability';

/** A real logger whose JSON lines are also kept, for tests that assert on what was (not) logged. */
export function captureLogger(service = 'test'): { logger: Logger; lines: string[]; text: () => string } {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  const logger = createLogger({ service, level: process.env.TEST_LOG_LEVEL || 'debug', stream });
  // Console output of tests stays quiet unless asked for.
  if (!process.env.TEST_LOG_LEVEL) logger.transports[0].silent = true;
  return { logger, lines, text: () => lines.join('\n') };
}
