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

/** Writes one info line whose fields `serialize` turns into JSON members (`,"key":value` each,
 *  undefined ones left out): the line pino writes for `log.info(fields, msg)`, same members in the
 *  same order, without pino's generic walk of every key and value (for the request summary, once
 *  per request, that walk and its string building were most of the line's cost: bench/README.md,
 *  "One request's instructions, by file"). Taken only where pino would write nothing else: no
 *  mixin, hook, log formatter, nested key, message prefix or destination that reads the last
 *  line's metadata; no redaction applies, so `fields` must hold no secret. Any other logger gets
 *  `log.info`. Uses `pino.symbols`, which pino exposes for integrations. */
export function infoLine<T extends object>(log: Logger, fields: T, serialize: (fields: T) => string, msg: string): void {
  if (!log.isLevelEnabled('info')) return;
  const l = log as unknown as Record<symbol, any>;
  const s = pino.symbols as typeof pino.symbols & { msgPrefixSym: symbol };
  const stream = l[s.streamSym];
  if (l[s.mixinSym] || l[s.hooksSym]?.logMethod || l[s.hooksSym]?.streamWrite || l[s.formattersSym]?.log
    || l[s.nestedKeySym] || l[s.msgPrefixSym] || stream?.[s.needsMetadataGsym] || l[s.messageKeySym] !== 'msg') {
    log.info(fields as Record<string, unknown>, msg);
    return;
  }
  stream.write(`${l[s.lsCacheSym][30]}${l[s.timeSym]()}${l[s.chindingsSym]}${serialize(fields)},"msg":${JSON.stringify(msg)}${l[s.endSym]}`);
}

/** What JSON.stringify escapes in a string: quotes, backslashes, control characters and lone
 *  surrogates (any surrogate sends the string to JSON.stringify, which knows a pair from a lone one). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON: quoted as it is when nothing in it needs escaping (ids, names, codes: most of
 *  what a line carries), else by JSON.stringify. */
const jsonString = (value: string): string => (NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`);

/** A JSON member for infoLine's serializers: `,"key":value`, or nothing for undefined. The key is
 *  written as given (the caller's own, plain ASCII); a string value is JSON-encoded. */
export const member = (key: string, value: string | number | boolean | undefined): string =>
  value === undefined ? '' : typeof value === 'string' ? `,"${key}":${jsonString(value)}`
    : `,"${key}":${typeof value === 'number' && !Number.isFinite(value) ? 'null' : value}`;

export type { Logger };
