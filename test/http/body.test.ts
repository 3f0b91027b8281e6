// lib/http/body.ts and lib/http/auth.ts bearerOf, over a real node:http server on port 0: the body
// cap (declared and streamed), the body bytes as sent, JSON-object parsing, and the Bearer header.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { awaitContinue, parseJsonObject, readBody } from '../../lib/http/body.ts';
import { bearerOf } from '../../lib/http/auth.ts';
import { GatewayError } from '../../lib/errors.ts';

const CAP = 1_000;
let server: Server;
let port: number;
/** How many body bytes the handler had read when it answered (to prove an early refusal). */
let seen: number;

before(async () => {
  server = createServer(async (req, res) => {
    if (req.url === '/later') {
      // As the pipeline reads it: after other awaits, by which time a small body has arrived whole.
      await new Promise((r) => setImmediate(r));
      const whole = req.complete;
      readBody(req, CAP).then(
        (buf) => res.end(JSON.stringify({ whole, length: buf.length, b64: buf.toString('base64') })),
        (err: GatewayError) => { res.writeHead(err.status, { connection: 'close' }); res.end(JSON.stringify({ whole, code: err.code })); },
      );
      return;
    }
    if (req.url === '/micro') {
      // As the pipeline reads it under load: after the guard's await (microtasks only), when node
      // has buffered the body of a request sent in one write but not yet marked it complete.
      await Promise.resolve();
      const complete = req.complete;
      let settled = false;
      const reading = readBody(req, CAP).then((buf) => { settled = true; return buf; });
      await Promise.resolve();
      await Promise.resolve();
      const atOnce = settled;
      const buf = await reading;
      // …and the request still ends, as one whose body was read does.
      const ended = await Promise.race([once(req, 'end').then(() => true), new Promise((r) => setTimeout(() => r(req.readableEnded), 500))]);
      res.end(JSON.stringify({ complete, atOnce, ended, b64: buf.toString('base64') }));
      return;
    }
    if (req.url === '/listeners') {
      // What readBody leaves on a request whose body streamed in: the request lives as long as its
      // answer, so a listener left on it would keep every chunk read.
      const events = ['data', 'end', 'error', 'aborted'] as const;
      const before = events.map((e) => req.listenerCount(e));
      readBody(req, { cap: CAP, totalMs: 5_000, idleMs: 5_000 }).then((buf) => {
        res.end(JSON.stringify({ length: buf.length, left: events.map((e, i) => req.listenerCount(e) - before[i]!) }));
      });
      return;
    }
    seen = 0;
    req.on('data', (c: Buffer) => { seen += c.length; });
    if (req.url === '/bearer') {
      res.end(JSON.stringify({ bearer: bearerOf(req) ?? null }));
      return;
    }
    readBody(req, CAP).then(
      (buf) => res.end(JSON.stringify({ ok: true, length: buf.length, b64: buf.toString('base64') })),
      (err: GatewayError) => { res.writeHead(err.status, { connection: 'close' }); res.end(JSON.stringify({ code: err.code, seen })); },
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));

/** Sends `chunks` one write at a time (chunked unless `length` declares a Content-Length). */
function send(chunks: Buffer[], headers: Record<string, string | number> = {}, path = '/'): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', path, headers }, (res: IncomingMessage) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e)));
    for (const c of chunks) req.write(c);
    req.end();
  });
}

test('a body up to the cap comes back byte for byte, whether in one chunk or many', async () => {
  const body = Buffer.from(Array.from({ length: CAP }, (_, i) => i % 251));
  const one = await send([body], { 'content-length': CAP });
  assert.equal(one.status, 200);
  assert.equal(one.json.length, CAP);
  assert.equal(one.json.b64, body.toString('base64'));
  const many = await send([body.subarray(0, 1), body.subarray(1, 500), body.subarray(500)]);
  assert.equal(many.json.b64, body.toString('base64'));
  const empty = await send([]);
  assert.equal(empty.json.length, 0);
});

test('a body already whole when it is read (the common case) is taken from the buffer: same bytes, same cap', async () => {
  const body = Buffer.from(Array.from({ length: CAP }, (_, i) => (i * 7) % 251));
  for (const chunks of [[body], [body.subarray(0, 10), body.subarray(10, 600), body.subarray(600)], []]) {
    const expected = Buffer.concat(chunks);
    const res = await send(chunks, {}, '/later');
    assert.equal(res.status, 200);
    assert.equal(res.json.whole, true, 'the request had fully arrived before readBody');
    assert.equal(res.json.b64, expected.toString('base64'));
  }
  // Undeclared (chunked) and over the cap, whole by the time it is read: refused all the same.
  const over = await send([Buffer.alloc(CAP), Buffer.alloc(1)], {}, '/later');
  assert.equal(over.json.whole, true);
  assert.equal(over.status, 413);
  assert.equal(over.json.code, 'request_too_large');
});

/** Writes `parts` on one raw connection, `gapMs` apart, and reads `answers` JSON answers off it. */
function sendRaw(parts: string[], answers: number, gapMs = 0): Promise<any[]> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let text = '';
    sock.on('data', (d) => {
      text += d;
      const bodies = [...text.matchAll(/\r\n\r\n(\{[^\r]*?\})(?=HTTP|$)/g)].map((m) => JSON.parse(m[1]!));
      if (bodies.length === answers) { sock.destroy(); resolve(bodies); }
    });
    sock.on('error', reject);
    parts.forEach((p, i) => setTimeout(() => sock.write(p), i * gapMs));
  });
}

test('a body that arrived with its headers is taken from the buffer before node marks the request complete; part of one waits for the rest', async () => {
  const body = '{"input":"' + 'x'.repeat(300) + '"}';
  const head = `POST /micro HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  // Two requests, each in one write, on one keep-alive connection.
  const whole = await sendRaw([head + body, head + body], 2, 20);
  for (const r of whole) {
    assert.equal(r.complete, false, 'node had not marked the request complete yet');
    assert.equal(r.atOnce, true, 'taken from the buffer, without waiting for another read');
    assert.equal(r.ended, true, 'the request still ends');
    assert.equal(Buffer.from(r.b64, 'base64').toString(), body);
  }
  // Headers and half the body, the rest 30 ms later: read as it streams, every byte.
  const [split] = await sendRaw([head + body.slice(0, 150), body.slice(150)], 1, 30);
  assert.equal(split.atOnce, false, 'a body still arriving is waited for');
  assert.equal(split.ended, true);
  assert.equal(Buffer.from(split.b64, 'base64').toString(), body);
});

test('a body read as it streams leaves no listener on the request', async () => {
  const body = 'x'.repeat(600);
  const head = `POST /listeners HTTP/1.1\r\nHost: gw\r\nContent-Length: ${body.length}\r\n\r\n`;
  const [r] = await sendRaw([head + body.slice(0, 100), body.slice(100, 300), body.slice(300)], 1, 20);
  assert.equal(r.length, body.length);
  assert.deepEqual(r.left, [0, 0, 0, 0], 'data, end, error and aborted listeners all removed');
});

test('a declared Content-Length over the cap is refused before a byte is read', async () => {
  const res = await send([], { 'content-length': CAP + 1 });
  assert.equal(res.status, 413);
  assert.equal(res.json.code, 'request_too_large');
  assert.equal(res.json.seen, 0);
});

test('an undeclared (chunked) body is refused as soon as it passes the cap, not at its end', async () => {
  const res = await send([Buffer.alloc(CAP), Buffer.alloc(1), Buffer.alloc(50_000)]);
  assert.equal(res.status, 413);
  assert.equal(res.json.code, 'request_too_large');
  assert.ok(res.json.seen < CAP + 50_000, `read ${res.json.seen} bytes`);
});

test('a body with a Content-Encoding other than identity is refused (the gateway decodes none); identity is no coding', async () => {
  for (const coding of ['gzip', 'br', 'GZIP', 'identity, gzip']) {
    const res = await send([Buffer.from('{"a":1}')], { 'content-encoding': coding });
    assert.equal(res.status, 415, coding);
    assert.equal(res.json.code, 'unsupported_content_encoding', coding);
  }
  for (const coding of ['identity', ' Identity ']) {
    const res = await send([Buffer.from('{"a":1}')], { 'content-encoding': coding });
    assert.equal(res.status, 200, coding);
    assert.equal(Buffer.from(res.json.b64, 'base64').toString(), '{"a":1}');
  }
});

test('Expect: 100-continue: readBody sends the 100 once, when it starts reading, not before', async () => {
  // As lib/http/server.ts does: the 100 is left to readBody, which this handler calls 150 ms in
  // (a key check, say), and twice.
  const continued = createServer();
  continued.on('checkContinue', (req, res) => {
    awaitContinue(req, res);
    setTimeout(() => {
      readBody(req, CAP).then(() => readBody(req, CAP)).then(() => res.end('{}'));
    }, 150);
  });
  await new Promise<void>((r) => continued.listen(0, '127.0.0.1', r));
  try {
    const sock = connect((continued.address() as AddressInfo).port, '127.0.0.1');
    const t0 = Date.now();
    let text = '';
    let continueAt = 0;
    sock.on('data', (d) => { text += d; if (!continueAt && text.includes('100 Continue')) continueAt = Date.now() - t0; });
    sock.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n');
    await new Promise((r) => setTimeout(r, 250));
    assert.ok(continueAt >= 140, `the 100 came ${continueAt} ms in, before the body was read`);
    sock.write('{}');
    await new Promise((r) => setTimeout(r, 100));
    sock.destroy();
    assert.equal(text.match(/100 Continue/g)?.length, 1);
    assert.match(text, /HTTP\/1\.1 200 OK/);
  } finally { continued.close(); }
});

test('parseJsonObject: invalid JSON, a non-object and an object', () => {
  const code = (s: string) => { try { parseJsonObject(Buffer.from(s)); return 'ok'; } catch (e) { return (e as GatewayError).code; } };
  assert.equal(code('{"a":'), 'invalid_json');
  assert.equal(code(''), 'invalid_json');
  for (const s of ['[]', '"s"', '1', 'null', 'true']) assert.equal(code(s), 'invalid_request', s);
  assert.deepEqual(parseJsonObject(Buffer.from(' {"a":[1,{"b":"é"}]} ')), { a: [1, { b: 'é' }] });
});

test('bearerOf: absent header → undefined; not a single Bearer token → ""; the scheme is case-insensitive', async () => {
  const get = (authorization?: string) => new Promise<unknown>((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', path: '/bearer', headers: authorization === undefined ? {} : { authorization } }, (res) => {
      let t = '';
      res.on('data', (c) => { t += c; });
      res.on('end', () => resolve(JSON.parse(t).bearer));
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(await get(), null);
  assert.equal(await get('Bearer sk-abc'), 'sk-abc');
  assert.equal(await get('bearer   sk-abc  '), 'sk-abc');
  assert.equal(await get('BEARER sk-abc'), 'sk-abc');
  assert.equal(await get('Basic dXNlcjpwYXNz'), '');
  assert.equal(await get('Bearer'), '');
  assert.equal(await get('Bearer two tokens'), '');
  assert.equal(await get('sk-abc'), '');
});
