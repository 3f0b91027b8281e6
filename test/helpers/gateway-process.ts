// Real gateway processes for the multi-process tests: spawn, wait for `listening <url>`, stop
// (SIGTERM, drained) or kill (SIGKILL, as a crash).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const CHILD = fileURLToPath(new URL('./gateway-child.ts', import.meta.url));

export interface GatewayProcess {
  url: string;
  pid: number;
  /** SIGTERM: drain and exit. */
  stop(): Promise<void>;
  /** SIGKILL: a crash; nothing is settled, nothing is flushed. */
  kill(): Promise<void>;
}

export async function spawnGateway(env: Record<string, string>): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'],
  });
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
    url, pid: child.pid!,
    async stop() { if (!gone()) { child.kill('SIGTERM'); await exited; } },
    async kill() { if (!gone()) { child.kill('SIGKILL'); await exited; } },
  };
}

export type { ChildProcess };
