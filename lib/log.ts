// pino, with every key-bearing field redacted: nothing secret reaches a log line, where it would
// outlive the key and reach whoever reads the logs.
import { pino, type Logger } from 'pino';

export function createLogger(level = process.env.LOG_LEVEL ?? 'info', destination?: NodeJS.WritableStream): Logger {
  const opts = {
    level,
    base: undefined,
    redact: {
      paths: ['authorization', 'headers.authorization', 'headers["x-api-key"]', 'headers["x-goog-api-key"]', 'key', 'credential', '*.key', '*.credential', 'api_key'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(opts, destination) : pino(opts);
}

export type { Logger };
