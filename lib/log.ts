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
  return pino(opts, destination ?? standardOutput());
}

/** What pino writes to: lines, and a flush for shutdown. */
interface LineSink { write(line: string): boolean; flush(cb?: (err?: Error) => void): void }

let stdout: LineSink | undefined;

/** Standard output, one write per event-loop turn: pino's own destination (sonic-boom) buffers
 *  the lines a turn produces, and one synchronous write at the end of the turn sends them all
 *  (sooner past 8 KiB). A request alone costs one write(2) for its summary line; an asynchronous
 *  destination cost each line a hand-off to libuv's thread pool, about six system calls and two
 *  thread wake-ups (bench/README.md, "System calls per request"). As with pino's default
 *  destination, a reader that stops reading a full pipe blocks the process until it reads again.
 *  What a turn left is written when the process exits, a crash included. One per process. */
function standardOutput(): LineSink {
  if (stdout) return stdout;
  const boom = pino.destination({ dest: 1, sync: true, minLength: 8_192 });
  let scheduled = false;
  // flush() writes what is buffered (flushSync would also fsync: a disk flush per turn on a file).
  const flush = (): void => { scheduled = false; boom.flush(); };
  process.once('exit', () => { try { boom.flushSync(); } catch { /* stdout already gone */ } });
  stdout = {
    write(line) {
      boom.write(line);
      if (!scheduled) { scheduled = true; setImmediate(flush); }
      return true;
    },
    flush(cb) { flush(); cb?.(); },
  };
  return stdout;
}

export type { Logger };
