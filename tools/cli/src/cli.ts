import { parseArgs } from 'node:util';
import type { ApiPaths } from '@smartlock/client';
import { AdminClient, ApiError, adminClient } from './admin-client';

const USAGE = `usage: node dist/tools/cli.js [options] <command> [arguments]   (or: npm run -s cli -- ...)

Commands
  companies create <name>
  companies list [--name <name>]
  companies get <companyId>
  keys create <companyId> --name <name> [--expires-at <ISO 8601 date-time>]
  keys list <companyId>
  keys revoke <keyId>
  keys current --apikey <key>          which company and key an API key is (no admin token needed)
  tokens create <companyId> --site <site_id> [--provider <provider>] [--expires-at <ISO 8601 date-time>]
  tokens list <companyId>
  tokens revoke <tokenId>
  callback get <companyId>
  callback set <companyId> --url <url> --auth hmac
  callback set <companyId> --url <url> --auth bearer --bearer <token>
  callback set <companyId> --url <url> --auth basic --username <user> --password <password>
  callback set <companyId> --url <url> --auth api_key --header <name> --value <value>
  callback rotate-secret <companyId>
  callback republish                   every endpoint again on identity.events (dispatcher re-sync)
  portal link <companyId> [--capabilities view,keys_tokens,callback,layout] [--expires-in <seconds>] [--issued-to <who>]
                                       a single-use link to the administration portal (view only unless told)
  portal on-call-link [--issued-to <who>] [--expires-in <seconds>]
                                       a single-use link to the on-call view (every company's dead letters);
                                       its replays are recorded under --issued-to (default: $USER)
  portal sessions <companyId>
  portal revoke-session <sessionId>
  portal revoke-link <linkId>          it opens nothing from now on; the session it opened, if any, ends
  locks list <companyId> [--page <n>]  the company's locks: vendor, name, account (service: the operator's), battery,
                                       and where each is bound (every lock has one owner company)
  locks assign <companyId> --lock <lockId>
                                       a lock of the service's vendor account becomes the company's (refused if another's)
  locks release <companyId> --lock <lockId>
                                       no company holds it any more (refused while it is bound)
  lock-accounts list <companyId>       the company's vendor accounts (never their secrets)
  lock-accounts connect <companyId> --provider ttlock --username <user> --password <password>
  lock-accounts connect <companyId> --provider nuki --name <name> --api-token <token>
                                       checks the credentials by listing the account's locks, which become the company's
  lock-accounts sync <companyId> --account <accountId>
                                       lists the account's locks again (new ones become the company's)
  lock-accounts rotate <companyId> --account <accountId> (--password <password> | --api-token <token>)
  lock-accounts disconnect <companyId> --account <accountId> [--unbind]
                                       releases its locks (refused while one is bound, unless --unbind)

Options
  --base-url <url>        the admin API (env SMARTLOCK_URL; default http://127.0.0.1:8080, the edge)
  --admin-token <token>   env ADMIN_TOKEN; default dev-admin-token (local development)
  --json                  print the API's JSON answer on stdout, for scripts
  -h, --help

A secret option (--admin-token, --apikey, --bearer, --password, --value, --api-token) may be given as env:NAME to
read it from the environment variable NAME instead of the command line (shell history, ps).
Exit codes: 0 done, 1 refused by the API or unreachable, 2 bad usage.`;

export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

class UsageError extends Error {}

const OPTIONS = {
  'base-url': { type: 'string' },
  url: { type: 'string' },
  'admin-token': { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  name: { type: 'string' },
  'expires-at': { type: 'string' },
  apikey: { type: 'string' },
  site: { type: 'string' },
  provider: { type: 'string' },
  auth: { type: 'string' },
  bearer: { type: 'string' },
  username: { type: 'string' },
  password: { type: 'string' },
  header: { type: 'string' },
  value: { type: 'string' },
  capabilities: { type: 'string' },
  'expires-in': { type: 'string' },
  'issued-to': { type: 'string' },
  lock: { type: 'string' },
  page: { type: 'string' },
  account: { type: 'string' },
  'api-token': { type: 'string' },
  unbind: { type: 'boolean', default: false },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** Runs one command; resolves with the process exit code. */
export async function run(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }) as { values: Values; positionals: string[] });
  } catch (err) {
    io.err(`error: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help || positionals.length === 0) {
    (values.help ? io.out : io.err)(USAGE);
    return values.help ? 0 : 2;
  }
  try {
    const secret = (name: keyof Values) => fromEnv(values[name] as string | undefined, env, name);
    const baseUrl = values['base-url'] ?? env.SMARTLOCK_URL ?? 'http://127.0.0.1:8080';
    const client = adminClient(baseUrl, secret('admin-token') ?? env.ADMIN_TOKEN ?? 'dev-admin-token');
    const result = await dispatch(client, positionals, values, secret, { baseUrl, user: env.USER || env.LOGNAME });
    if (values.json) io.out(JSON.stringify(result.data, null, 2));
    else io.out(result.text);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof ApiError) {
      io.err(`error: ${err.status} ${err.message}`);
      if (values.json) io.err(JSON.stringify(err.body));
      return 1;
    }
    io.err(`error: ${(err as Error).message}`);
    return 1;
  }
}

function fromEnv(value: string | undefined, env: NodeJS.ProcessEnv, option: string): string | undefined {
  if (value === undefined || !value.startsWith('env:')) return value;
  const name = value.slice(4);
  const v = env[name];
  if (v === undefined || v === '') throw new UsageError(`--${option} env:${name}: the variable ${name} is not set`);
  return v;
}

interface Result {
  data: unknown;
  text: string;
}

type Row = Record<string, unknown>;
const req = (v: string | undefined, what: string): string => {
  if (v === undefined || v === '') throw new UsageError(`${what} is required`);
  return v;
};
const when = (v: unknown) => (v ? String(v) : '-');

/** Where the CLI runs: the API's base URL, and who runs it (the on-call link's default operator). */
interface Context {
  baseUrl: string;
  user: string | undefined;
}

async function dispatch(client: AdminClient, pos: string[], v: Values, secret: (name: keyof Values) => string | undefined, ctx: Context): Promise<Result> {
  const [group, action, arg, ...rest] = pos;
  if (rest.length) throw new UsageError(`unexpected argument ${rest[0]}`);
  const { api, call } = client;
  const company = () => ({ path: { companyId: req(arg, '<companyId>') } });
  const accountPath = () => ({ path: { companyId: req(arg, '<companyId>'), accountId: req(v.account, '--account') } });
  const command = `${group} ${action ?? ''}`.trim();
  switch (command) {
    case 'companies create': {
      const c = await call(api.POST('/admin/v1/companies', { body: { name: req(arg, '<name>') } }));
      return { data: c, text: `company created\n  _id   ${c._id}\n  name  ${c.name}` };
    }
    case 'companies list': {
      const list = await call(api.GET('/admin/v1/companies', { params: { query: v.name ? { name: v.name } : {} } }));
      return { data: list, text: table(list, ['_id', 'name', 'created_at']) };
    }
    case 'companies get': {
      const c = await call(api.GET('/admin/v1/companies/{companyId}', { params: company() }));
      return { data: c, text: `${c._id}  ${c.name}  created ${c.created_at}` };
    }
    case 'keys create': {
      const body = { name: req(v.name, '--name'), ...(v['expires-at'] ? { expires_at: v['expires-at'] } : {}) };
      const k = await call(api.POST('/admin/v1/companies/{companyId}/api-keys', { params: company(), body }));
      return {
        data: k,
        text: `API key created (shown this once: store it now)\n  key         ${k.key}\n  _id         ${k._id}\n  prefix      ${k.prefix}\n  expires_at  ${when(k.expires_at)}`,
      };
    }
    case 'keys list': {
      const list = await call(api.GET('/admin/v1/companies/{companyId}/api-keys', { params: company() }));
      return { data: list, text: table(list, ['_id', 'prefix', 'name', 'expires_at', 'revoked_at', 'last_used_at']) };
    }
    case 'keys revoke': {
      const k = await call(api.POST('/admin/v1/api-keys/{keyId}/revoke', { params: { path: { keyId: req(arg, '<keyId>') } } }));
      return { data: k, text: `API key ${k._id} (${k.prefix}) revoked at ${k.revoked_at}` };
    }
    case 'keys current': {
      const key = req(secret('apikey') ?? arg, '--apikey');
      const k = await call(api.GET('/admin/v1/keys/current', { headers: { apikey: key } }));
      return { data: k, text: `key ${k.prefix} (${k.name}) of company ${k.company_id} (${k.company_name}); expires ${when(k.expires_at)}` };
    }
    case 'tokens create': {
      const body = {
        site_id: req(v.site, '--site'),
        ...(v.provider ? { provider: v.provider } : {}),
        ...(v['expires-at'] ? { expires_at: v['expires-at'] } : {}),
      };
      const t = await call(api.POST('/admin/v1/companies/{companyId}/ingest-tokens', { params: company(), body }));
      return {
        data: t,
        text: `ingest token created (shown this once: the URL is the credential)\n  path      ${t.path}   (on {webhook_url})\n  token     ${t.token}\n  _id       ${t._id}\n  site_id   ${t.site_id}\n  provider  ${t.provider}\n  expires   ${when(t.expires_at)}`,
      };
    }
    case 'tokens list': {
      const list = await call(api.GET('/admin/v1/companies/{companyId}/ingest-tokens', { params: company() }));
      return { data: list, text: table(list, ['_id', 'site_id', 'provider', 'expires_at', 'revoked_at', 'last_used_at']) };
    }
    case 'tokens revoke': {
      const t = await call(api.POST('/admin/v1/ingest-tokens/{tokenId}/revoke', { params: { path: { tokenId: req(arg, '<tokenId>') } } }));
      return { data: t, text: `ingest token ${t._id} (site ${t.site_id}) revoked at ${t.revoked_at}` };
    }
    case 'callback get': {
      const c = await call(api.GET('/admin/v1/companies/{companyId}/callback', { params: company() }));
      return { data: c, text: endpointText(c) };
    }
    case 'callback set': {
      const c = await call(
        api.PUT('/admin/v1/companies/{companyId}/callback', { params: company(), body: { url: req(v.url, '--url'), auth: callbackAuth(v, secret) } }),
      );
      const secretLine = c.secret ? `\n  signing secret (shown this once: store it now)  ${c.secret}` : '';
      return { data: c, text: `callback endpoint set\n${endpointText(c)}${secretLine}` };
    }
    case 'callback rotate-secret': {
      const r = await call(api.POST('/admin/v1/companies/{companyId}/callback/rotate-secret', { params: company() }));
      return {
        data: r,
        text: `new signing secret (shown this once: store it now)  ${r.secret}\nthe previous secret stays valid until ${r.previous_valid_until}`,
      };
    }
    case 'callback republish': {
      const r = await call(api.POST('/admin/v1/callback-endpoints/republish'));
      return { data: r, text: `${r.republished} callback endpoint(s) republished on identity.events` };
    }
    case 'portal link': {
      const body: PortalLink = { ...expiresIn(v) };
      // The admin API refuses an unknown capability (400, naming it): no second list of them here.
      if (v.capabilities)
        body.capabilities = v.capabilities
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean) as PortalLink['capabilities'];
      if (v['issued-to']) body.issued_to = v['issued-to'];
      return linkResult(ctx, await call(api.POST('/admin/v1/companies/{companyId}/portal-links', { params: company(), body })));
    }
    case 'portal on-call-link': {
      if (arg !== undefined) throw new UsageError(`unexpected argument ${arg}`);
      // The admin API requires who goes on call (replays are recorded under it): the caller, unless told.
      const body = { issued_to: req(v['issued-to'] ?? ctx.user, '--issued-to (no $USER to default to)'), ...expiresIn(v) };
      return linkResult(ctx, await call(api.POST('/admin/v1/portal-links/on-call', { body })));
    }
    case 'portal sessions': {
      const list = await call(api.GET('/admin/v1/companies/{companyId}/portal-sessions', { params: company() }));
      return {
        data: list,
        text: table(
          list.map((r) => ({ ...r, capabilities: r.capabilities.join(',') })),
          ['_id', 'capabilities', 'issued_to', 'created_at', 'expires_at', 'revoked_at'],
        ),
      };
    }
    case 'portal revoke-session': {
      const r = await call(api.POST('/admin/v1/portal-sessions/{sessionId}/revoke', { params: { path: { sessionId: req(arg, '<sessionId>') } } }));
      return { data: r, text: `portal session ${r._id} revoked at ${r.revoked_at}` };
    }
    case 'portal revoke-link': {
      const r = await call(api.POST('/admin/v1/portal-links/{linkId}/revoke', { params: { path: { linkId: req(arg, '<linkId>') } } }));
      const opened = r.used_at ? ` (opened at ${r.used_at}: its session is revoked too)` : ' (never opened)';
      return { data: r, text: `portal link ${r._id} revoked at ${r.revoked_at}${opened}` };
    }
    case 'locks list': {
      const page = v.page === undefined ? undefined : Number(v.page);
      if (page !== undefined && !(Number.isInteger(page) && page >= 1)) throw new UsageError('--page must be a whole number from 1');
      const r = await call(api.GET('/admin/v1/companies/{companyId}/locks', { params: { ...company(), query: page ? { page } : {} } }));
      const rows = r.data.locks.map((l) => ({
        ...l,
        account: l.account_id ?? 'service',
        battery: l.battery ? `${l.battery.percent ?? '?'}%${l.battery.low ? ' low' : ''}` : '-',
        bound_to: l.bound_to ? `${l.bound_to.level} ${l.bound_to.name} (${l.bound_to._id})` : '-',
      }));
      return { data: r.data, text: table(rows, ['lock_id', 'provider', 'name', 'account', 'battery', 'source', 'assigned_at', 'bound_to']) };
    }
    case 'locks assign': {
      const lockId = req(v.lock, '--lock');
      const r = await call(
        api.PUT('/admin/v1/companies/{companyId}/locks/{lockId}/owner', { params: { path: { companyId: req(arg, '<companyId>'), lockId } } }),
      );
      return { data: r.data, text: r.data.created ? `lock ${lockId} assigned to company ${arg}` : `lock ${lockId} was company ${arg}'s already` };
    }
    case 'locks release': {
      const lockId = req(v.lock, '--lock');
      const r = await call(
        api.DELETE('/admin/v1/companies/{companyId}/locks/{lockId}/owner', { params: { path: { companyId: req(arg, '<companyId>'), lockId } } }),
      );
      return { data: r.data, text: `lock ${r.data.lock_id} released: no company holds it now` };
    }
    case 'lock-accounts list': {
      const list = await call(api.GET('/admin/v1/companies/{companyId}/lock-accounts', { params: company() }));
      return { data: list, text: table(list, ['_id', 'provider', 'label', 'status', 'locks_found', 'synced_at', 'status_reason']) };
    }
    case 'lock-accounts connect': {
      const provider = req(v.provider, '--provider');
      let body: LockAccountConnect;
      if (provider === 'ttlock') body = { provider, username: req(v.username, '--username'), password: req(secret('password'), '--password') };
      else if (provider === 'nuki') body = { provider, name: req(v.name, '--name'), api_token: req(secret('api-token'), '--api-token') };
      else throw new UsageError('--provider must be ttlock or nuki');
      const r = await call(api.POST('/admin/v1/companies/{companyId}/lock-accounts', { params: company(), body }));
      return { data: r, text: `${r.account.provider} account ${r.account.label} connected (${r.account._id})\n${lockRows(r.locks)}` };
    }
    case 'lock-accounts sync': {
      const r = await call(api.POST('/admin/v1/companies/{companyId}/lock-accounts/{accountId}/sync', { params: accountPath() }));
      return { data: r, text: syncedText(r) };
    }
    case 'lock-accounts rotate': {
      const password = secret('password');
      const token = secret('api-token');
      if ((password === undefined) === (token === undefined)) throw new UsageError('give exactly one of --password (ttlock) or --api-token (nuki)');
      const body = password !== undefined ? { password } : { api_token: token as string };
      const r = await call(api.PUT('/admin/v1/companies/{companyId}/lock-accounts/{accountId}/secret', { params: accountPath(), body }));
      return { data: r, text: `new secret accepted\n${syncedText(r)}` };
    }
    case 'lock-accounts disconnect': {
      const r = await call(
        api.DELETE('/admin/v1/companies/{companyId}/lock-accounts/{accountId}', { params: { ...accountPath(), query: v.unbind ? { unbind: 'true' } : {} } }),
      );
      return {
        data: r,
        text: `${r.account.provider} account ${r.account.label} disconnected: ${r.released.length} lock(s) released, ${r.unbound.length} unbound`,
      };
    }
    default:
      throw new UsageError(`unknown command: ${pos.join(' ')}`);
  }
}

function expiresIn(v: Values): { expires_in_seconds?: number } {
  if (!v['expires-in']) return {};
  if (!/^\d+$/.test(v['expires-in'])) throw new UsageError('--expires-in must be a number of seconds');
  return { expires_in_seconds: Number(v['expires-in']) };
}

/** A portal link as issued: its URL on the base URL, shown once. */
function linkResult(
  ctx: Context,
  l: { path: string; capabilities: string[]; issued_to?: string | null; expires_at: string; session_ttl_seconds: number },
): Result {
  const url = `${ctx.baseUrl.replace(/\/+$/, '')}${l.path}`;
  const issuedTo = l.issued_to ? `\n  issued to     ${l.issued_to}` : '';
  return {
    data: { ...l, url },
    text: `portal link (single use, shown this once: send it to one person)\n  url           ${url}\n  capabilities  ${l.capabilities.join(', ')}${issuedTo}\n  open before   ${l.expires_at}\n  session lasts ${Number(l.session_ttl_seconds) / 3600} h`,
  };
}

type PortalLink = NonNullable<ApiPaths['/admin/v1/companies/{companyId}/portal-links']['post']['requestBody']>['content']['application/json'];
type LockAccountConnect = ApiPaths['/admin/v1/companies/{companyId}/lock-accounts']['post']['requestBody']['content']['application/json'];
type FoundLocks = ApiPaths['/admin/v1/companies/{companyId}/lock-accounts']['post']['responses']['201']['content']['application/json']['locks'];
type SyncedAccount = ApiPaths['/admin/v1/companies/{companyId}/lock-accounts/{accountId}/sync']['post']['responses']['200']['content']['application/json'];

/** The locks found in an account: a lock another company holds is said so (and not the company's). */
function lockRows(locks: FoundLocks): string {
  const rows = locks.map((l) => ({
    ...l,
    battery: l.battery ? `${l.battery.percent ?? '?'}%${l.battery.low ? ' low' : ''}` : '-',
    held: l.held_elsewhere ? 'another company' : 'this company',
  }));
  return table(rows, ['lock_id', 'name', 'battery', 'remote', 'held']);
}

function syncedText(r: SyncedAccount): string {
  const missing = r.missing.length ? `\nno longer listed by the vendor (kept): ${r.missing.join(', ')}` : '';
  return `${r.account.provider} account ${r.account.label}: ${r.account.status}, ${r.account.locks_found} lock(s)\n${lockRows(r.locks)}${missing}`;
}

type CallbackAuth = ApiPaths['/admin/v1/companies/{companyId}/callback']['put']['requestBody']['content']['application/json']['auth'];

function callbackAuth(v: Values, secret: (name: keyof Values) => string | undefined): CallbackAuth {
  const type = req(v.auth, '--auth');
  const auth = (() => {
    switch (type) {
      case 'hmac':
        return { type };
      case 'bearer':
        return { type, token: req(secret('bearer'), '--bearer') };
      case 'basic':
        return { type, username: req(v.username, '--username'), password: req(secret('password'), '--password') };
      case 'api_key':
        return { type, header: req(v.header, '--header'), value: req(secret('value'), '--value') };
      default:
        throw new UsageError('--auth must be hmac, bearer, basic or api_key');
    }
  })();
  // The document types the fields each auth type requires loosely (joi's `when` becomes a oneOf with
  // `not: {}`), so the strings are not assignable as they are.
  return auth as unknown as CallbackAuth;
}

function endpointText(c: Row): string {
  const auth = c.auth as Row & { secrets?: Row[] };
  const lines = [`  company   ${c.company_id}`, `  url       ${c.url}`, `  auth      ${auth.type}`, `  version   ${c.version}`];
  if (auth.username) lines.push(`  username  ${auth.username}`);
  if (auth.header) lines.push(`  header    ${auth.header}`);
  for (const s of auth.secrets ?? []) lines.push(`  secret    created ${s.created_at}, ${s.valid_until ? `valid until ${s.valid_until}` : 'current'}`);
  return lines.join('\n');
}

function table(rows: Row[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((r) => columns.map((c) => when(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (vals: string[]) =>
    vals
      .map((val, i) => val.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}
