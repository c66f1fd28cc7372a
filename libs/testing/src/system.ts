import { apiDocument, ingestDocument } from '@smartlock/contracts';
import { registerContractHost, unregisterContractHost } from './contract';
import { createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName } from './infra';
import { freePort, LaunchedApp, launchApp } from './launcher';
import { SmsApi, SmtpSink, startSmsApi, startSmtpSink } from '@smartlock/sinks';
import { CallbackReceiver, startCallbackReceiver } from './receivers';

const SYSTEM_ADMIN_TOKEN = 'e2e-admin-token-0123456789';
const SYSTEM_SECRETS_KEY = 'a1'.repeat(32);

type AppName = 'lock-cloud-simulator' | 'admin-api' | 'location-api' | 'ingest-gateway' | 'access-api' | 'provisioning-worker' | 'callback-dispatcher' | 'edge';

export interface SystemOptions {
  workers?: number;
  dispatchers?: number;
  /** Extra environment for every process, or per app. */
  env?: Record<string, string>;
  appEnv?: Partial<Record<AppName, Record<string, string>>>;
  /** A broker of the caller's (e.g. startPrivateRabbit().vhost) instead of a new vhost on the shared one; the caller removes it. */
  vhost?: TestVhost;
  /**
   * The apps' own defaults for retry schedules, timeouts and relay intervals, as `npm start` runs
   * them (a benchmark measures what a user meets). Without it they are short, so a test waits
   * seconds; the relays then also poll more often than in production.
   */
  defaultTimings?: boolean;
  /**
   * `simulator`: guest e-mail and SMS go to the lock-cloud simulator's sinks (SIM_GUEST_SINK), as
   * `npm start` wires them, and its /sim/guest-messages page shows them; `sys.smtp` and `sys.sms`
   * then stay empty. Otherwise they go to sinks in the test's process.
   */
  guestSink?: 'simulator';
}

/**
 * The whole system as a customer meets it, each app its own process (built bundles from
 * `npm run build`), on free ports, in a vhost and databases of its own, with the lock-cloud
 * simulator, a callback receiver, an SMTP sink and an SMS stub. `stop()` tears everything down.
 */
export async function launchSystem(opts: SystemOptions = {}) {
  const vhost: TestVhost = opts.vhost ?? (await createVhost('sys'));
  const receiver: CallbackReceiver = await startCallbackReceiver();
  const smtp: SmtpSink = await startSmtpSink({ refuse: (address) => address.endsWith('@reject.example') });
  const sms: SmsApi = await startSmsApi();
  const dbs = {
    identity: uniqueDbName('sys_identity'),
    ingest: uniqueDbName('sys_ingest'),
    location: uniqueDbName('sys_location'),
    access: uniqueDbName('sys_access'),
    provisioning: uniqueDbName('sys_provisioning'),
    dispatcher: uniqueDbName('sys_dispatcher'),
    sim: uniqueDbName('sys_sim'),
  };
  const ports = {
    sim: await freePort(),
    admin: await freePort(),
    location: await freePort(),
    ingest: await freePort(),
    access: await freePort(),
    edge: await freePort(),
    simSmtp: opts.guestSink === 'simulator' ? await freePort() : 0,
  };
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const common: Record<string, string> = {
    NODE_ENV: 'test',
    AMQP_URL: vhost.url,
    MONGO_URL,
    IDENTITY_DB: dbs.identity,
    ADMIN_TOKEN: SYSTEM_ADMIN_TOKEN,
    SECRETS_KEY: SYSTEM_SECRETS_KEY,
    // shared by their producers and consumers (admin-api → dispatcher; worker → access-api, dispatcher)
    IDENTITY_EVENTS_KEY: '1e'.repeat(32),
    MESSAGE_KEY: '3f'.repeat(32),
    LOCATION_API_URL: url(ports.location),
    INGEST_GATEWAY_URL: url(ports.ingest),
    ACCESS_API_URL: url(ports.access),
    LOCK_CLOUD_URL: url(ports.sim),
    // Nuki's Web API: the same simulator (admin-api's lock accounts).
    NUKI_API_URL: url(ports.sim),
    SMTP_HOST: smtp.host,
    SMTP_PORT: String(ports.simSmtp || smtp.port),
    // The sink is a local relay without TLS: the documented opt-out.
    SMTP_ALLOW_PLAINTEXT: 'true',
    SMTP_FROM: 'keys@smartlock.test',
    SMS_API_URL: ports.simSmtp ? `${url(ports.sim)}/sms` : sms.url,
    SMS_ACCOUNT_SID: 'ACe2e',
    SMS_AUTH_TOKEN: 'e2e-sms-token',
    SMS_FROM: '+15550000000',
    // the callback receiver listens on loopback: the development switch (docs/configuration.md)
    CALLBACK_ALLOW_LOOPBACK: 'true',
    ...(opts.defaultTimings
      ? {}
      : {
          // short schedules: a test waits seconds, not hours
          PROVISIONING_RETRY_DELAYS_MS: '200,400,800',
          CALLBACK_RETRY_DELAYS_MS: '300,600,1200',
          CALLBACK_TIMEOUT_MS: '2000',
          RELAY_INTERVAL_MS: '500',
          SCHEDULE_RELAY_INTERVAL_MS: '1000',
        }),
    ...opts.env,
  };
  const specs: { name: AppName; env: Record<string, string> }[] = [
    {
      name: 'lock-cloud-simulator',
      env: { MONGO_DB: dbs.sim, PORT: String(ports.sim), ...(ports.simSmtp ? { SIM_GUEST_SINK: 'true', SIM_SMTP_PORT: String(ports.simSmtp) } : {}) },
    },
    { name: 'admin-api', env: { MONGO_DB: dbs.identity, PORT: String(ports.admin), PORTAL_WEBHOOK_URL: url(ports.ingest) } },
    { name: 'location-api', env: { MONGO_DB: dbs.location, PORT: String(ports.location) } },
    { name: 'ingest-gateway', env: { MONGO_DB: dbs.ingest, PORT: String(ports.ingest) } },
    { name: 'access-api', env: { MONGO_DB: dbs.access, PORT: String(ports.access) } },
    ...Array.from({ length: opts.workers ?? 1 }, () => ({ name: 'provisioning-worker' as const, env: { MONGO_DB: dbs.provisioning } })),
    ...Array.from({ length: opts.dispatchers ?? 1 }, () => ({ name: 'callback-dispatcher' as const, env: { MONGO_DB: dbs.dispatcher } })),
  ];

  const running: { name: AppName; env: Record<string, string>; app: LaunchedApp }[] = [];
  const fullEnv = (name: AppName, env: Record<string, string>) => ({ ...common, ...env, ...opts.appEnv?.[name] });
  async function launch(name: AppName, env: Record<string, string>) {
    const full = fullEnv(name, env);
    const app = await launchApp(name, full);
    running.push({ name, env: full, app });
    return app;
  }

  // Every app at once, as a deployment starts them (the whole launch 9 s against 12 s one app after
  // another, measured), kept in the order of `specs` so that `app(name, i)` is stable; then the edge,
  // which needs a dispatcher's address.
  const envs = specs.map((spec) => fullEnv(spec.name, spec.env));
  const launched = await Promise.allSettled(specs.map((spec, i) => launchApp(spec.name, envs[i])));
  launched.forEach((l, i) => l.status === 'fulfilled' && running.push({ name: specs[i].name, env: envs[i], app: l.value }));
  try {
    const failed = launched.find((l): l is PromiseRejectedResult => l.status === 'rejected');
    if (failed) throw failed.reason;
    const dispatcher = running.find((r) => r.name === 'callback-dispatcher');
    await launch('edge', {
      PORT: String(ports.edge),
      LOCATION_API_URL: url(ports.location),
      ACCESS_API_URL: url(ports.access),
      ADMIN_API_URL: url(ports.admin),
      CALLBACK_DISPATCHER_URL: dispatcher ? dispatcher.app.url : url(1),
    });
  } catch (err) {
    await Promise.all(running.map((r) => r.app.stop()));
    throw err;
  }

  // Every response from the two hosts is checked against their OpenAPI documents (contract.ts).
  registerContractHost(url(ports.edge), apiDocument());
  registerContractHost(url(ports.ingest), ingestDocument());
  const system = {
    baseUrl: url(ports.edge),
    webhookUrl: url(ports.ingest),
    simUrl: url(ports.sim),
    adminToken: SYSTEM_ADMIN_TOKEN,
    vhost,
    receiver,
    smtp,
    sms,
    dbs,
    processes: () => running.map((r) => ({ name: r.name, pid: r.app.pid, url: r.app.url })),
    /** The i-th running process of an app. */
    app(name: AppName, i = 0): LaunchedApp {
      const found = running.filter((r) => r.name === name)[i];
      if (!found) throw new Error(`no process ${i} of ${name}`);
      return found.app;
    },
    /** Kills (SIGKILL by default) one process and waits for it to exit. */
    async kill(name: AppName, i = 0, signal: NodeJS.Signals = 'SIGKILL') {
      const app = system.app(name, i);
      app.kill(signal);
      await app.exited;
    },
    /** Starts the i-th process of an app again with the same environment (and port). */
    async restart(name: AppName, i = 0) {
      const idx = running.indexOf(running.filter((r) => r.name === name)[i]);
      const entry = running[idx];
      await entry.app.stop();
      const env = { ...entry.env, PORT: String(entry.app.port) };
      entry.app = await launchApp(name, env);
      return entry.app;
    },
    /** Adds one more process of an app (scaling out). */
    async scale(name: 'provisioning-worker' | 'callback-dispatcher') {
      return launch(name, { MONGO_DB: name === 'provisioning-worker' ? dbs.provisioning : dbs.dispatcher });
    },
    logs(name: AppName, i = 0) {
      return system.app(name, i).output();
    },
    async stop() {
      unregisterContractHost(system.baseUrl);
      unregisterContractHost(system.webhookUrl);
      await Promise.all(running.map((r) => r.app.stop()));
      await Promise.all([receiver.stop(), smtp.close(), sms.close()]);
      if (!opts.vhost) await vhost.remove();
      await dropDatabases(...Object.values(dbs));
    },
  };
  return system;
}
export type System = Awaited<ReturnType<typeof launchSystem>>;
