// pino, with every key-bearing field redacted: nothing secret reaches a log line, where it would
// outlive the key and reach whoever reads the logs.
import { pino, type Logger } from 'pino';

export function createLogger(level = process.env.LOG_LEVEL ?? 'info', destination?: NodeJS.WritableStream): Logger {
  const opts = {
    level,
    base: undefined,
    redact: {
      paths: [
        'authorization', 'headers.authorization', 'headers["x-api-key"]', 'headers["x-goog-api-key"]',
        'key', 'credential', '*.key', '*.credential', 'api_key',
      ],
      censor: '[redacted]',
    },
  };
  // Standard output written asynchronously: under load the lines of many requests leave in one
  // write instead of a blocking write each; idle, a line still leaves at once. pino flushes what
  // is pending when the process exits.
  return pino(opts, destination ?? pino.destination({ dest: 1, sync: false }));
}

export type { Logger };
