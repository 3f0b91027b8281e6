// Starting on an embedded data folder that is not what it should be: gateway.db missing or empty
// beside an earlier gateway's state, damaged, or not writable by the gateway's user. Each is a real
// `npm start` process (lib/main.ts) whose exit code and message are what the operator sees; the
// WAL's size limit is checked on the store's own connection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, cpSync, mkdtempSync, openSync, writeSync, closeSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openDatabase, WAL_SIZE_LIMIT } from '../../lib/store/db.ts';

const MAIN = fileURLToPath(new URL('../../lib/main.ts', import.meta.url));
const ADMIN = 'startup-admin-token';

interface Started { url?: string; code?: number | null; output: string; stop(): Promise<void> }

/** `node lib/main.ts` on a data folder: resolves once it listens (url) or has exited (code). */
function start(dataDir: string, env: Record<string, string> = {}, uid?: number): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, GATEWAY_DATA_DIR: dataDir, PORT: '0', GATEWAY_ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info', HOME: tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(uid === undefined ? {} : { uid, gid: uid }),
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve) => {
    let output = '';
    const stop = async (): Promise<void> => { if (child.exitCode === null) { child.kill('SIGTERM'); await exited; } };
    const read = (chunk: Buffer): void => {
      output += chunk;
      const m = /"url":"(http:[^"]+)".*"msg":"gateway listening"/.exec(output);
      if (m) resolve({ url: m[1], output, stop });
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void exited.then((code) => resolve({ code, output, stop }));
  });
}

/** A data folder a gateway has run in: an organization with money, then stopped. */
async function earlierFolder(): Promise<{ dir: string; org: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-startup-'));
  const g = await start(dir);
  assert.ok(g.url, g.output);
  const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const org = await (await fetch(`${g.url}/admin/v1/orgs`, { method: 'POST', headers, body: '{"name":"earlier"}' })).json() as { id: string };
  const topup = await fetch(`${g.url}/admin/v1/orgs/${org.id}/topups`, { method: 'POST', headers, body: '{"cash_micro_usd":5000000}' });
  assert.equal(topup.status, 200);
  await g.stop();
  return { dir, org: org.id };
}

const copyOf = (dir: string): string => {
  const copy = mkdtempSync(join(tmpdir(), 'gw-startup-copy-'));
  cpSync(dir, copy, { recursive: true });
  return copy;
};

test('a missing or empty gateway.db beside an earlier gateway\'s secret.key is refused with the absolute path; GATEWAY_NEW_DATABASE=1 starts empty, and says so', async () => {
  const { dir } = await earlierFolder();
  const deleted = copyOf(dir);
  rmSync(join(deleted, 'gateway.db'));
  const emptied = copyOf(dir);
  truncateSync(join(emptied, 'gateway.db'), 0);
  try {
    for (const [folder, state] of [[deleted, 'is missing'], [emptied, 'is empty (0 bytes)']] as const) {
      const g = await start(folder);
      await g.stop();
      assert.equal(g.code, 1, g.output);
      assert.match(g.output, new RegExp(`gateway: ${join(folder, 'gateway.db')} ${state.replace(/[()]/g, '\\$&')}, but its folder holds secret.key from an earlier gateway`));
      assert.match(g.output, /Restore gateway.db from a backup .*GATEWAY_NEW_DATABASE=1/);
      assert.doesNotMatch(g.output, /\n\s+at /, 'no stack trace');
    }
    // Refused before it wrote anything: the missing file was not created.
    assert.equal(statSync(join(deleted, 'gateway.db'), { throwIfNoEntry: false }), undefined);

    const fresh = await start(deleted, { GATEWAY_NEW_DATABASE: '1' });
    assert.ok(fresh.url, fresh.output);
    await fresh.stop();
    const line = JSON.parse(fresh.output.split('\n').find((l) => l.includes('"msg":"store: SQLite')) ?? '{}');
    assert.deepEqual([line.file, line.created, line.msg], [join(deleted, 'gateway.db'), true, 'store: SQLite, a new empty database']);

    // Once it exists, the next start opens it without the opt-in, and says it was not created.
    const again = await start(deleted);
    assert.ok(again.url, again.output);
    await again.stop();
    assert.match(again.output, new RegExp(`"file":"${join(deleted, 'gateway.db')}","created":false,"msg":"store: SQLite"`));
  } finally {
    for (const d of [dir, deleted, emptied]) rmSync(d, { recursive: true, force: true });
  }
});

test('a brand-new data folder starts without the opt-in', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'gw-startup-new-')), 'data');
  try {
    const g = await start(dir);
    assert.ok(g.url, g.output);
    await g.stop();
    assert.match(g.output, /"created":true,"msg":"store: SQLite, a new empty database"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a damaged gateway.db stops the start with its path and what to do, not a stack trace', async () => {
  const { dir } = await earlierFolder();
  const header = copyOf(dir);
  const fd = openSync(join(header, 'gateway.db'), 'r+');
  writeSync(fd, Buffer.alloc(16, 0x41), 0, 16, 0);   // the "SQLite format 3" header
  closeSync(fd);
  const halved = copyOf(dir);
  truncateSync(join(halved, 'gateway.db'), Math.floor(statSync(join(halved, 'gateway.db')).size / 8192) * 4096);
  try {
    for (const [folder, code] of [[header, 'SQLITE_NOTADB'], [halved, 'SQLITE_CORRUPT']] as const) {
      const g = await start(folder);
      await g.stop();
      assert.equal(g.code, 1, g.output);
      assert.match(g.output, new RegExp(`gateway: ${join(folder, 'gateway.db')} is damaged \\(${code}: [^)]+\\): restore it from a backup`));
      assert.doesNotMatch(g.output, /\n\s+at /, 'no stack trace');
    }
  } finally {
    for (const d of [dir, header, halved]) rmSync(d, { recursive: true, force: true });
  }
});

// Root writes any file: the gateway runs as an unprivileged user here, as a service does.
const root = process.getuid?.() === 0;
test('a gateway.db its user cannot write stops the start (it served 500s with /readyz 200 before)', { skip: !root && 'needs root, to run the gateway as another user' }, async () => {
  const NOBODY = 65534;
  const { dir } = await earlierFolder();
  const folder = copyOf(dir);
  chmodSync(folder, 0o755);
  chownSync(folder, NOBODY, NOBODY);
  for (const name of ['secret.key', 'simulator-sa.pem']) chownSync(join(folder, name), NOBODY, NOBODY);
  chmodSync(join(folder, 'gateway.db'), 0o644);   // root's, as after a restore by root
  try {
    const g = await start(folder, {}, NOBODY);
    await g.stop();
    assert.equal(g.code, 1, g.output);
    assert.match(g.output, new RegExp(`gateway: ${join(folder, 'gateway.db')} is not writable by uid ${NOBODY} \\(SQLITE_READONLY`));

    chownSync(join(folder, 'gateway.db'), NOBODY, NOBODY);   // the operator's fix
    const fixed = await start(folder, {}, NOBODY);
    assert.ok(fixed.url, fixed.output);
    assert.equal((await fetch(`${fixed.url}/readyz`)).status, 200);
    await fixed.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(folder, { recursive: true, force: true });
  }
});

test('the WAL shrinks back to its limit once a reader that held it open ends', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-wal-'));
  const db = openDatabase(dir);
  const reader = new Database(join(dir, 'gateway.db'));
  const wal = (): number => statSync(join(dir, 'gateway.db-wal')).size;
  try {
    db.exec('CREATE TABLE filler (body BLOB)');
    const insert = db.prepare('INSERT INTO filler (body) VALUES (?)');
    const clear = db.prepare('DELETE FROM filler');
    const mb = Buffer.alloc(1 << 20, 7);
    // An open read transaction (an operator's sqlite3 shell) keeps every checkpoint short of the end.
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM filler').get();
    for (let i = 0; i < 24; i++) { db.transaction(() => { for (let j = 0; j < 4; j++) insert.run(mb); clear.run(); })(); }
    const grown = wal();
    assert.ok(grown > WAL_SIZE_LIMIT, `the WAL grew past the limit while the reader held it (${grown})`);
    reader.exec('COMMIT');
    db.pragma('wal_checkpoint(PASSIVE)');   // what the next automatic checkpoint does
    insert.run(Buffer.from('next write'));   // the write that restarts the WAL from its start
    assert.ok(wal() <= WAL_SIZE_LIMIT, `the WAL is back within ${WAL_SIZE_LIMIT} bytes (${wal()})`);
  } finally {
    reader.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
