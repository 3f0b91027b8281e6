#!/usr/bin/env -S npx tsx
// `gateway` CLI: the admin API from the shell. GATEWAY_URL (http://127.0.0.1:8080) and
// GATEWAY_ADMIN_TOKEN select the gateway. Prints the JSON answer; exits 1 on an error answer.
import { readFileSync } from 'node:fs';

const USAGE = `usage: gateway <command>
  org create <name>
  key create <org_id> [--default-start-within HHh-MMm-SSs|now] [--manage]
  key revoke <key_id>
  provider-key set <org_id> <route> <key>          (direct routes)
  provider-key set <org_id> <route> --json <file>  (cloud routes: credential JSON)
  provider-key delete <org_id> <route>
  topup <org_id> [--cash <micro_usd>] [--credit <micro_usd>]
  overrides <org_id> [--concurrency <n|null>] [--daily-spend <micro_usd|null>]
  review start|end <org_id>
  exempt <org_id> true|false
  ledger <org_id>
  scheduler                                        (the flex policy's current estimates)
  orgs
  usage [<query string, e.g. group_by=org,day>]`;

type Call = [method: string, path: string, body?: unknown];

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
}
const num = (v: string | undefined): number | null | undefined => (v === undefined ? undefined : v === 'null' ? null : Number(v));

export function toCall(argv: string[]): Call {
  const [a, b, c, d, e, f] = argv;
  const enc = encodeURIComponent;
  switch (`${a} ${b}`) {
    case 'org create': if (c) return ['POST', '/admin/v1/orgs', { name: c }]; break;
    case 'key create': if (c) return ['POST', `/admin/v1/orgs/${enc(c)}/keys`, { default_start_within: flag(argv, '--default-start-within') ?? null, scopes: argv.includes('--manage') ? ['inference', 'manage'] : ['inference'] }]; break;
    case 'key revoke': if (c) return ['DELETE', `/admin/v1/keys/${enc(c)}`]; break;
    case 'provider-key set':
      if (c && d && e) return ['PUT', `/admin/v1/orgs/${enc(c)}/provider-keys/${enc(d)}`, e === '--json' && f ? JSON.parse(readFileSync(f, 'utf8')) : { key: e }];
      break;
    case 'provider-key delete': if (c && d) return ['DELETE', `/admin/v1/orgs/${enc(c)}/provider-keys/${enc(d)}`]; break;
    case 'review start': if (c) return ['POST', `/admin/v1/orgs/${enc(c)}/review`]; break;
    case 'review end': if (c) return ['DELETE', `/admin/v1/orgs/${enc(c)}/review`]; break;
  }
  switch (a) {
    case 'topup': if (b) return ['POST', `/admin/v1/orgs/${enc(b)}/topups`, { cash_micro_usd: num(flag(argv, '--cash')), credit_micro_usd: num(flag(argv, '--credit')) }]; break;
    case 'overrides': if (b) return ['PUT', `/admin/v1/orgs/${enc(b)}/overrides`, { concurrency: num(flag(argv, '--concurrency')), daily_spend_micro_usd: num(flag(argv, '--daily-spend')) }]; break;
    case 'exempt': if (b && (c === 'true' || c === 'false')) return ['PUT', `/admin/v1/orgs/${enc(b)}/exempt`, { exempt: c === 'true' }]; break;
    case 'ledger': if (b) return ['GET', `/admin/v1/orgs/${enc(b)}/ledger`]; break;
    case 'scheduler': return ['GET', '/admin/v1/scheduler'];
    case 'orgs': return ['GET', '/admin/v1/orgs'];
    case 'usage': return ['GET', `/admin/v1/usage${b ? `?${b}` : ''}`];
  }
  throw new Error(USAGE);
}

export async function runCli(argv: string[], env = process.env): Promise<{ status: number; body: string }> {
  const [method, path, body] = toCall(argv);
  const res = await fetch(new URL(path, env.GATEWAY_URL ?? 'http://127.0.0.1:8080'), {
    method,
    headers: { authorization: `Bearer ${env.GATEWAY_ADMIN_TOKEN ?? ''}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.text() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runCli(process.argv.slice(2)).then(({ status, body }) => {
    console.log(body);
    process.exit(status >= 400 ? 1 : 0);
  }, (err) => { console.error(err.message); process.exit(2); });
}
