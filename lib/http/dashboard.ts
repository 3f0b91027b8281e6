// GET /dashboard: the page people look at, served by the gateway itself from lib/dashboard/
// (plain HTML, one script, one stylesheet; no build step, no CDN). Files are read once at start.
// The page calls the same public APIs as any client, with the key or admin token typed in.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { GatewayError } from '../errors.ts';

const dir = new URL('../dashboard/', import.meta.url);
const FILES: Record<string, { type: string; body: Buffer }> = {
  '/dashboard': { type: 'text/html; charset=utf-8', body: readFileSync(new URL('index.html', dir)) },
  '/dashboard/app.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('app.js', dir)) },
  '/dashboard/charts.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('charts.js', dir)) },
  '/dashboard/style.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('style.css', dir)) },
};

const HEADERS = {
  'content-security-policy': [
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:",
    "form-action 'none'", "frame-ancestors 'none'", "base-uri 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

export function serveDashboard(req: IncomingMessage, res: ServerResponse, path: string): void {
  const file = FILES[path === '/dashboard/' ? '/dashboard' : path];
  if (!file) throw new GatewayError('not_found');
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new GatewayError('method_not_allowed');
  res.writeHead(200, { ...HEADERS, 'content-type': file.type, 'content-length': file.body.length });
  res.end(req.method === 'HEAD' ? undefined : file.body);
}
