// Each server of a benchmark (simulator, bare proxy, gateway) runs in its own process, so that
// autocannon (in the runner) does not share an event loop with what it measures, and so that each
// server's CPU time can be read on its own. Both sides of the small IPC protocol live here:
// the child says `ready` with its URL; the parent asks for `process.cpuUsage()` and for `stop`.
import { fork, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** True when the module at `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(moduleUrl);
}

type ToChild = { type: 'cpu' } | { type: 'mem' } | { type: 'stop' };
type ToParent =
  | { type: 'ready'; url: string; info: Record<string, string> }
  | { type: 'cpu'; usage: NodeJS.CpuUsage }
  | { type: 'mem'; rss: number }
  | { type: 'failed'; message: string };

export interface Served { url: string; info?: Record<string, string>; close(): Promise<void> }

/** Child side: start the server, report its URL, answer CPU questions, stop on request. */
export function serveAsChild(start: () => Promise<Served>): void {
  if (!process.send) throw new Error('serveAsChild: not started with an IPC channel (use forkServer)');
  const send = (m: ToParent): void => { process.send!(m); };
  start().then((served) => {
    process.on('message', (m: ToChild) => {
      if (m.type === 'cpu') send({ type: 'cpu', usage: process.cpuUsage() });
      else if (m.type === 'mem') {
        // Children run with --expose-gc: collect first, so RSS is what is live, not garbage.
        (globalThis as { gc?: () => void }).gc?.();
        send({ type: 'mem', rss: process.memoryUsage.rss() });
      }
      else if (m.type === 'stop') void served.close().finally(() => process.exit(0));
    });
    send({ type: 'ready', url: served.url, info: served.info ?? {} });
  }, (err: unknown) => {
    send({ type: 'failed', message: err instanceof Error ? err.stack ?? err.message : String(err) });
    process.exit(1);
  });
  // The parent died without asking: do not linger.
  process.on('disconnect', () => process.exit(0));
}

export interface ServerProcess {
  name: string;
  url: string;
  info: Record<string, string>;
  pid: number;
  /** Total CPU (user + system) this process has used so far, in µs. */
  cpuMicros(): Promise<number>;
  /** Resident set size after a full garbage collection, in bytes. */
  rssBytes(): Promise<number>;
  stop(): Promise<void>;
}

/** Parent side: fork `file` (relative to bench/, or absolute) and wait for it to listen. `wrap`
 *  runs node under another program (`['valgrind', '--tool=callgrind']`: bench/instructions.ts). */
export async function forkServer(name: string, file: string, args: string[] = [], nodeFlags: string[] = [], wrap: string[] = []): Promise<ServerProcess> {
  const path = fileURLToPath(new URL(file, import.meta.url));
  // stdout is discarded: the gateway logs one pino line per request, which is part of its cost,
  // but the runner's terminal is for tables. stderr stays visible for crashes.
  // A bundle (.mjs) runs on plain node, as `npm start` does; a .ts file under tsx.
  const loader = path.endsWith('.mjs') ? [] : ['--import', 'tsx'];
  const execArgv = [...loader, '--expose-gc', ...nodeFlags];
  const child = fork(path, args, {
    ...(wrap.length ? { execPath: wrap[0], execArgv: [...wrap.slice(1), process.execPath, ...execArgv] } : { execArgv }),
    stdio: ['ignore', process.env.BENCH_CHILD_STDOUT ? 'inherit' : 'ignore', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ url: string; info: Record<string, string> }>((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`${name} exited (${code}) before it was ready`));
    child.once('exit', onExit);
    child.on('message', function first(m: ToParent) {
      if (m.type === 'ready') { child.off('exit', onExit); child.off('message', first); resolve(m); }
      else if (m.type === 'failed') { child.off('exit', onExit); reject(new Error(`${name} failed to start:\n${m.message}`)); }
    });
  });
  return {
    name, url: ready.url, info: ready.info, pid: child.pid!,
    cpuMicros: () => ask(child, 'cpu').then((m) => m.usage.user + m.usage.system),
    rssBytes: () => ask(child, 'mem').then((m) => m.rss),
    stop: () => stopChild(child),
  };
}

function ask<T extends 'cpu' | 'mem'>(child: ChildProcess, type: T): Promise<Extract<ToParent, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: ToParent): void => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      resolve(m as Extract<ToParent, { type: T }>);
    };
    child.on('message', onMessage);
    if (!child.send({ type } satisfies ToChild)) reject(new Error('child IPC channel closed'));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => { clearTimeout(timer); resolve(); });
    child.send({ type: 'stop' } satisfies ToChild);
  });
}
