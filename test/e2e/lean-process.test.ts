// The production process: `npm start` runs one plain node process on the bundle in dist/ (no tsx,
// no esbuild service), is ready quickly and small when idle, and on SIGTERM stops accepting, lets an
// open stream finish, and exits 0. Figures are printed for the closing note; the bounds asserted
// are far looser than the targets (≤ 0.5 s, ≤ 80 MB, met on a quiet machine: README) because this
// 2-core machine runs the rest of the suite beside it (a start measured 3.4 s at load 9).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { sim } from '../helpers/gateway.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]);
}

function children(pid: number): number {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).length;
}

test('npm start: one node process on compiled JavaScript, quick to ready, small, drains on SIGTERM and exits 0', async () => {
  if (!existsSync(join(ROOT, 'dist/lib/main.mjs'))) execFileSync('node', ['build.mjs'], { cwd: ROOT });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  // Plain node on the bundle, with V8 flags only (README, "Memory": the young generation's cap, no pretenuring).
  const start = /^node((?: --[a-z-]+(?:=\S+)?)*) dist\/lib\/main\.mjs$/.exec(pkg.scripts.start);
  assert.ok(start, `npm start runs the bundle with plain node: ${pkg.scripts.start}`);
  const flags = start[1]!.split(' ').filter(Boolean);
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-lean-'));
  const alive = new Set<import('node:child_process').ChildProcess>();
  const env = { ...process.env, PORT: '0', GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: 'lean-admin', GATEWAY_CONFIG: '', NODE_OPTIONS: '' };
  try {
    // First start creates the data folder (and the simulator's service-account key); measure a restart.
    for (const round of [1, 2]) {
      const t0 = performance.now();
      const child = spawn(process.execPath, [...flags, 'dist/lib/main.mjs'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
      alive.add(child);
      child.once('exit', () => alive.delete(child));
      let out = '';
      child.stdout.setEncoding('utf8');
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (c: string) => {
          out += c;
          const m = /"url":"(http:[^"]+)".*"msg":"gateway listening"/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
      const readyMs = performance.now() - t0;
      if (round === 1) { child.kill('SIGTERM'); await once(child, 'exit'); continue; }
      await new Promise((r) => setTimeout(r, 1_500));
      const idleKb = rssKb(child.pid!);
      assert.equal(children(child.pid!), 0, 'no helper processes');
      console.log(`# lean process: ready in ${readyMs.toFixed(0)} ms, idle RSS ${(idleKb / 1024).toFixed(1)} MiB`);
      assert.ok(readyMs < 10_000, `ready in ${readyMs} ms`);
      assert.ok(idleKb < 110 * 1024, `idle RSS ${idleKb} kB`);

      // A stream in flight when SIGTERM arrives runs to its end; then the process exits 0.
      const admin = async (path: string, body: unknown) => (await fetch(url + path, { method: 'POST', headers: { authorization: 'Bearer lean-admin' }, body: JSON.stringify(body) })).json() as Promise<any>;
      const org = await admin('/admin/v1/orgs', { name: 'lean' });
      await admin(`/admin/v1/orgs/${org.id}/topups`, { cash_micro_usd: 5_000_000 });
      const key = await admin(`/admin/v1/orgs/${org.id}/keys`, {});
      const res = await fetch(`${url}/v1/responses`, {
        method: 'POST', headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-5.4-mini', input: sim({ output_tokens: 30, tokens_per_s: 30, standard_start_ms: 0 }), start_within: 'now', stream: true }),
      });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      await reader.read();
      child.kill('SIGTERM');
      let text = '';
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += Buffer.from(r.value).toString();
      assert.match(text, /response\.completed/, 'the open stream finished');
      const [code] = await once(child, 'exit');
      assert.equal(code, 0);
      assert.match(out, /"msg":"stopped"/);
    }
  } finally {
    for (const c of alive) c.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
