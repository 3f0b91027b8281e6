#!/usr/bin/env -S npx tsx
// `gateway` CLI: the admin API from the shell. GATEWAY_URL (http://127.0.0.1:8080) and
// GATEWAY_ADMIN_TOKEN select the gateway. Prints the JSON answer; exits 1 on an error answer.
import { readFileSync } from 'node:fs';

const USAGE = `usage: gateway <command>
  org create <name>
  key create <org_id> [--default-start-within HHh-MMm-SSs|now] [--default-provider ROUTE[,ROUTE…]] [--manage]
  key revoke <key_id>
  provider-key set <org_id> <route> <key>          (direct routes)
  provider-key set <org_id> <route> --json <file>  (the whole body: {"key": <credential>, "project"?, "location"?, "region"?})
  provider-key delete <org_id> <route>
  topup <org_id> [--cash <micro_usd>] [--credit <micro_usd>] [--idempotency-key <key>]
  overrides <org_id> [--concurrency <n|null>] [--daily-spend <micro_usd|null>]
  review start|end <org_id>
  exempt <org_id> true|false
  ledger <org_id>
  reseal                                           (after a GATEWAY_SECRET_KEY rotation, once every process runs the new secret:
                                                    provider keys sealed again with it; refused while a running process seals with another)
  processes                                        (the running processes and the fingerprint of the secret each seals with)
  scheduler                                        (the flex policy's current estimates)
  orgs [<query string, e.g. limit=200&cursor=…>]     (a page; next_cursor names the next one)
  usage [<query string, e.g. group_by=org,day>]`;

type Call = [method: string, path: string, body?: unknown, headers?: Record<string, string>];

function flag(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
}
const num = (text: string | undefined): number | null | undefined =>
  (text === undefined ? undefined : text === 'null' ? null : Number(text));

export function toCall(argv: string[]): Call {
  const enc = encodeURIComponent;
  // Two-word commands: `<noun> <verb> <subject> …`, the subject being an org name, an org id or a key id.
  const [noun, verb, subject, route, key, jsonFile] = argv;
  switch (`${noun} ${verb}`) {
    case 'org create': if (subject) return ['POST', '/admin/v1/orgs', { name: subject }]; break;
    case 'key create':
      if (subject) {
        return ['POST', `/admin/v1/orgs/${enc(subject)}/keys`, {
          default_start_within: flag(argv, '--default-start-within') ?? null,
          default_provider: flag(argv, '--default-provider')?.split(',') ?? null,
          scopes: argv.includes('--manage') ? ['inference', 'manage'] : ['inference'],
        }];
      }
      break;
    case 'key revoke': if (subject) return ['DELETE', `/admin/v1/keys/${enc(subject)}`]; break;
    case 'provider-key set':
      if (subject && route && key) {
        const credential = key === '--json' && jsonFile ? JSON.parse(readFileSync(jsonFile, 'utf8')) : { key };
        return ['PUT', `/admin/v1/orgs/${enc(subject)}/provider-keys/${enc(route)}`, credential];
      }
      break;
    case 'provider-key delete':
      if (subject && route) return ['DELETE', `/admin/v1/orgs/${enc(subject)}/provider-keys/${enc(route)}`];
      break;
    case 'review start': if (subject) return ['POST', `/admin/v1/orgs/${enc(subject)}/review`]; break;
    case 'review end': if (subject) return ['DELETE', `/admin/v1/orgs/${enc(subject)}/review`]; break;
  }
  // One-word commands: `<command> <org_id> …` (orgs and usage take a query string instead).
  const [command, orgId, value] = argv;
  switch (command) {
    case 'topup':
      if (orgId) {
        const key = flag(argv, '--idempotency-key');
        return ['POST', `/admin/v1/orgs/${enc(orgId)}/topups`, {
          cash_micro_usd: num(flag(argv, '--cash')), credit_micro_usd: num(flag(argv, '--credit')),
        }, key === undefined ? undefined : { 'idempotency-key': key }];
      }
      break;
    case 'overrides':
      if (orgId) {
        return ['PUT', `/admin/v1/orgs/${enc(orgId)}/overrides`, {
          concurrency: num(flag(argv, '--concurrency')), daily_spend_micro_usd: num(flag(argv, '--daily-spend')),
        }];
      }
      break;
    case 'exempt':
      if (orgId && (value === 'true' || value === 'false')) {
        return ['PUT', `/admin/v1/orgs/${enc(orgId)}/exempt`, { exempt: value === 'true' }];
      }
      break;
    case 'ledger': if (orgId) return ['GET', `/admin/v1/orgs/${enc(orgId)}/ledger`]; break;
    case 'scheduler': return ['GET', '/admin/v1/scheduler'];
    case 'reseal': return ['POST', '/admin/v1/provider-keys/reseal'];
    case 'processes': return ['GET', '/admin/v1/processes'];
    case 'orgs': case 'usage': {
      const query = argv[1];
      return ['GET', `/admin/v1/${command}${query ? `?${query}` : ''}`];
    }
  }
  throw new Error(USAGE);
}

export async function runCli(argv: string[], env = process.env): Promise<{ status: number; body: string }> {
  const [method, path, body, headers] = toCall(argv);
  const res = await fetch(new URL(path, env.GATEWAY_URL ?? 'http://127.0.0.1:8080'), {
    method,
    headers: { authorization: `Bearer ${env.GATEWAY_ADMIN_TOKEN ?? ''}`, 'content-type': 'application/json', ...headers },
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
