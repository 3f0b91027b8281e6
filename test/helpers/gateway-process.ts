// Real gateway processes for the multi-process tests: spawn, wait for `listening <url>`, stop
// (SIGTERM, drained) or kill (SIGKILL, as a crash). With `inspect`, the process also opens the
// V8 inspector on an ephemeral loopback port (for tests that look at its memory from outside).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const CHILD = fileURLToPath(new URL('./gateway-child.ts', import.meta.url));

export interface GatewayProcess {
  url: string;
  pid: number;
  /** The inspector's WebSocket address, when spawned with `inspect`. */
  inspectorUrl?: string;
  /** SIGTERM: drain and exit. */
  stop(): Promise<void>;
  /** SIGKILL: a crash; nothing is settled, nothing is flushed. */
  kill(): Promise<void>;
}

export async function spawnGateway(env: Record<string, string>, opts: { inspect?: boolean } = {}): Promise<GatewayProcess> {
  const flags = opts.inspect ? ['--inspect=127.0.0.1:0'] : [];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', CHILD], {
    env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', opts.inspect ? 'pipe' : 'inherit'],
  });
  const inspectorUrl = opts.inspect ? inspectorAddress(child) : undefined;
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const onExit = (code: number | null): void => reject(new Error(`gateway process exited (${code}) before listening`));
    child.once('exit', onExit);
    lines.on('line', (line) => {
      const m = /^listening (\S+)$/.exec(line);
      if (m) { child.off('exit', onExit); resolve(m[1]!); }
    });
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
  return {
    url, pid: child.pid!, inspectorUrl: await inspectorUrl,
    async stop() { if (!gone()) { child.kill('SIGTERM'); await exited; } },
    async kill() { if (!gone()) { child.kill('SIGKILL'); await exited; } },
  };
}

/** Node prints `Debugger listening on ws://…` on stderr; everything else there is passed on. */
function inspectorAddress(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`gateway process exited (${code}) before its inspector listened`)));
    createInterface({ input: child.stderr! }).on('line', (line) => {
      const m = /^Debugger listening on (ws:\S+)$/.exec(line);
      if (m) resolve(m[1]!);
      else if (!/^For help, see: |^Debugger attached|^Waiting for the debugger/.test(line)) process.stderr.write(line + '\n');
    });
  });
}

export type { ChildProcess };
