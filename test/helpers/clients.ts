// Real clients against a real gateway: a gateway on port 0 (built-in simulator behind it) that
// records every request it answered, and a runner for client programs (the pinned binaries in
// node_modules/.bin) with a fresh HOME, a time bound and no way to the internet beyond localhost.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startTestGateway, type TestGateway } from './gateway.ts';
import { VOCABULARY } from '../../lib/simulator/words.ts';

export interface Answered { method: string; path: string; status: number; body?: string; beta?: string }

export interface ClientGateway extends TestGateway {
  /** Every request the gateway answered, in order (error bodies kept). */
  answered: Answered[];
  /** The requests it refused or failed (status ≥ 400), for assertions and messages. */
  refused(): Answered[];
}

export async function startClientGateway(): Promise<ClientGateway> {
  const t = await startTestGateway();
  const answered: Answered[] = [];
  t.gw.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const entry: Answered = { method: req.method ?? '', path: (req.url ?? '').split('?', 1)[0]!, status: 0 };
    const beta = req.headers['anthropic-beta'];
    if (beta !== undefined) entry.beta = String(beta);
    const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      if (res.statusCode >= 400 && (typeof args[0] === 'string' || Buffer.isBuffer(args[0]))) entry.body = String(args[0]).slice(0, 500);
      return end(...args);
    }) as typeof res.end;
    res.on('finish', () => { entry.status = res.statusCode; answered.push(entry); });
  });
  return Object.assign(t, {
    answered,
    refused: () => answered.filter((a) => a.status >= 400),
  });
}

export const BIN = resolve(import.meta.dirname, '../../node_modules/.bin');

export interface RunResult { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; timedOut: boolean; ms: number }

/** Runs a client program with a fresh HOME/XDG folders (no user config is read) and a time bound
 *  (the whole process group is killed past it). `env` adds to a minimal environment; `files`
 *  (paths relative to HOME) are written first: the client's own config files. `HOME` in env values
 *  and file contents is replaced by the fresh home folder. */
export async function runClient(cmd: string, args: string[], opts: { env?: Record<string, string>; files?: Record<string, string>; cwd?: string; timeoutMs?: number; input?: string } = {}): Promise<RunResult> {
  const home = mkdtempSync(join(tmpdir(), 'client-home-'));
  for (const [rel, content] of Object.entries(opts.files ?? {})) {
    mkdirSync(dirname(join(home, rel)), { recursive: true });
    writeFileSync(join(home, rel), content);
  }
  const cwd = opts.cwd ?? join(home, 'project');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(join(home, 'tmp'));
  const t0 = Date.now();
  try {
    const child = spawn(cmd, args, {
      cwd,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        XDG_DATA_HOME: join(home, '.local/share'),
        XDG_CACHE_HOME: join(home, '.cache'),
        XDG_STATE_HOME: join(home, '.local/state'),
        TMPDIR: join(home, 'tmp'),   // the clients' own scratch folders go away with the home
        TERM: 'dumb',
        NO_COLOR: '1',
        CI: '1',
        ...opts.env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.stdin.end(opts.input ?? '');
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, opts.timeoutMs ?? 90_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((ok) => child.on('close', (c, s) => ok([c, s])));
    clearTimeout(timer);
    return { code, signal, stdout, stderr, timedOut, ms: Date.now() - t0 };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** A one-line account of a run, for assertion messages. */
export function describeRun(r: RunResult, gw?: ClientGateway): string {
  return JSON.stringify({
    code: r.code, signal: r.signal, timedOut: r.timedOut, ms: r.ms,
    stdout: r.stdout.slice(-2000), stderr: r.stderr.slice(-2000),
    refused: gw?.refused(), answered: gw?.answered.map((a) => `${a.method} ${a.path} ${a.status}`),
  }, null, 1);
}

/** The simulator's sentences in a client's output: `#sim{"output_tokens":N}` answers N words of
 *  its vocabulary, the first capitalised, ending with a period. */
export function simulatorSentences(text: string, minWords: number): string[] {
  const words = new Set<string>(VOCABULARY);
  const found = text.match(/[A-Z][a-z]*(?: [a-z]+)+\./g) ?? [];
  return found.filter((s) => {
    const w = s.slice(0, -1).toLowerCase().split(' ');
    return w.length >= minWords && w.every((x) => words.has(x));
  });
}

/** Requests answered since `from` (an index into `answered`), as "METHOD path status". */
export function since(gw: ClientGateway, from: number): string[] {
  return gw.answered.slice(from).map((a) => `${a.method} ${a.path} ${a.status}`);
}
