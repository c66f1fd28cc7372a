import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ConfigError, baseEnv } from '@smartlock/config';
import { APP_BROKER_ACCESS } from '@smartlock/messaging';

/*
 * deploy/k8s rendered as `kubectl apply -k` would send it (client side only: `kubectl kustomize`, no
 * cluster), then checked against the apps themselves: every app of apps/ is deployed, and each
 * Deployment gives its app every variable its joi config schema requires in production, with values
 * that schema accepts. No kubeconform: it fetches its schemas from the network at run time.
 */

const ROOT = path.resolve(__dirname, '../..');
const OVERLAYS = ['local', 'production'] as const;
type Overlay = (typeof OVERLAYS)[number];
/** The vendor's cloud as a test double: in the local overlay only. */
const SIMULATOR = 'lock-cloud-simulator';
/** Reachable from outside the cluster: {base_url} and {webhook_url}. */
const PUBLIC = ['edge', 'ingest-gateway'];
/** Scaled by KEDA on the depth of the queues they consume; every other app by an HPA on CPU. */
const QUEUE_SCALED = ['provisioning-worker', 'callback-dispatcher'];

// Every app that runs as a process (its src/main.ts); apps/portal is pages that admin-api serves and ships.
const APPS = fs
  .readdirSync(path.join(ROOT, 'apps'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && fs.existsSync(path.join(ROOT, 'apps', e.name, 'src/main.ts')))
  .map((e) => e.name)
  .sort();
const appsOf = (overlay: Overlay) => APPS.filter((app) => overlay === 'local' || app !== SIMULATOR);

// ---- the rendered manifests ----------------------------------------------------------------------

type Labels = Record<string, string>;
interface LabelSelector {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}
interface Manifest {
  kind: string;
  metadata: { name: string; labels?: Labels };
  spec?: unknown;
  data?: Record<string, string>;
}
interface KeyRef {
  name: string;
  key: string;
  optional?: boolean;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: KeyRef; configMapKeyRef?: KeyRef };
}
interface Probe {
  httpGet?: { path: string; port: number | string };
}
interface Container {
  name: string;
  image: string;
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string; optional?: boolean }; secretRef?: { name: string; optional?: boolean } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: { requests?: { cpu?: string; memory?: string }; limits?: { memory?: string } };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; runAsNonRoot?: boolean; runAsUser?: number };
  volumeMounts?: { name: string; mountPath: string }[];
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
}
interface DeploymentSpec {
  selector: LabelSelector;
  template: {
    metadata: { labels: Labels };
    spec: {
      containers: Container[];
      securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
      terminationGracePeriodSeconds?: number;
      volumes?: { name: string; emptyDir?: object }[];
    };
  };
}
interface ServiceSpec {
  selector: Labels;
  ports: { port: number; targetPort: number | string }[];
}
interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string };
}
interface PolicyRule {
  from?: Peer[];
  to?: Peer[];
  ports?: { protocol?: string; port?: number | string }[];
}
interface NetworkPolicySpec {
  podSelector: LabelSelector;
  policyTypes: ('Ingress' | 'Egress')[];
  ingress?: PolicyRule[];
  egress?: PolicyRule[];
}
interface Trigger {
  type: string;
  metadata: Record<string, string>;
  authenticationRef?: { name: string };
}

function render(overlay: Overlay): Manifest[] {
  let out: string;
  try {
    out = execFileSync('kubectl', ['kustomize', path.join(ROOT, 'deploy/k8s/overlays', overlay)], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    throw new Error(
      e.code === 'ENOENT' ? 'kubectl not found: install it (its `kustomize` renders deploy/k8s)' : `kubectl kustomize ${overlay}: ${e.stderr ?? e.message}`,
    );
  }
  return parseAllDocuments(out).map((doc) => {
    if (doc.errors.length) throw doc.errors[0];
    return doc.toJS() as Manifest;
  });
}

const rendered = {} as Record<Overlay, Manifest[]>;
beforeAll(() => {
  for (const overlay of OVERLAYS) rendered[overlay] = render(overlay);
});

const ofKind = <T>(overlay: Overlay, kind: string) => rendered[overlay].filter((m) => m.kind === kind) as (Manifest & { spec: T })[];
const named = <T>(overlay: Overlay, kind: string, name: string) => ofKind<T>(overlay, kind).find((m) => m.metadata.name === name);

function selects(selector: LabelSelector, labels: Labels): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) =>
    operator === 'In'
      ? values.includes(labels[key])
      : operator === 'NotIn'
        ? !values.includes(labels[key])
        : operator === 'Exists'
          ? key in labels
          : !(key in labels),
  );
  return byLabels && byExpressions;
}

function deployment(overlay: Overlay, app: string) {
  const d = named<DeploymentSpec>(overlay, 'Deployment', app);
  if (!d) throw new Error(`${overlay}: no Deployment ${app}`);
  const container = d.spec.template.spec.containers.find((c) => c.name === 'app');
  if (!container) throw new Error(`${overlay}: Deployment ${app} has no container "app"`);
  return { pod: d.spec.template.spec, labels: d.spec.template.metadata.labels, container };
}

/** A named or numbered container port, as a number. */
function portNumber(container: Container, port: number | string | undefined): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

// ---- the environment a Deployment gives its app --------------------------------------------------

/** A Secret generated by the overlay (name with kustomize's hash suffix) or, in production, created by the operator. */
function secret(overlay: Overlay, name: string): Record<string, string> | undefined {
  const generated = named<unknown>(overlay, 'Secret', name);
  if (generated) return Object.fromEntries(Object.entries(generated.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  if (overlay === 'local') return undefined;
  // Production's Secrets are created by the operator (docs/operations.md "Deploying to Kubernetes"): the local
  // overlay generates the same ones, with the same keys, so its values stand in for them here.
  const local = ofKind<unknown>('local', 'Secret').find((s) => s.metadata.name.replace(/-[a-z0-9]{10}$/, '') === name);
  return local && secret('local', local.metadata.name);
}

function configMap(overlay: Overlay, name: string): Record<string, string> | undefined {
  return named<unknown>(overlay, 'ConfigMap', name)?.data;
}

/** Every variable the container gets, with its value; an optional reference that resolves to nothing gives none. */
function environment(overlay: Overlay, container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  const lookup = (kind: string, source: Record<string, string> | undefined, ref: KeyRef) => {
    if (source?.[ref.key] !== undefined) return source[ref.key];
    if (ref.optional) return undefined;
    throw new Error(`${overlay}: ${kind} ${ref.name} with key ${ref.key} is neither generated nor known (docs/operations.md "Deploying to Kubernetes")`);
  };
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const source = from.configMapRef ? configMap(overlay, ref.name) : secret(overlay, ref.name);
    if (!source && !ref.optional) throw new Error(`${overlay}: envFrom ${ref.name}: not generated, so its keys are unknown`);
    Object.assign(env, source);
  }
  for (const v of container.env ?? []) {
    const value =
      v.value ??
      (v.valueFrom?.secretKeyRef && lookup('Secret', secret(overlay, v.valueFrom.secretKeyRef.name), v.valueFrom.secretKeyRef)) ??
      (v.valueFrom?.configMapKeyRef && lookup('ConfigMap', configMap(overlay, v.valueFrom.configMapKeyRef.name), v.valueFrom.configMapKeyRef));
    if (value !== undefined) env[v.name] = value;
  }
  return env;
}

// ---- the apps' own configuration -----------------------------------------------------------------

type ReadConfig = (env: NodeJS.ProcessEnv) => Record<string, unknown>;
const readConfigs: Record<string, ReadConfig> = {};
beforeAll(async () => {
  // Each app's own config.ts (an app is not a library, hence not an import: the deployment is checked
  // against the schema the app validates at boot).
  for (const app of APPS) readConfigs[app] = ((await import(path.join(ROOT, 'apps', app, 'src/config.ts'))) as { readConfig: ReadConfig }).readConfig;
});

/** What the app's schema refuses in this environment (ConfigError's problems, each naming its variable). */
function problems(app: string, env: NodeJS.ProcessEnv): string[] {
  try {
    readConfigs[app](env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

/** The variables the app's schema requires in production, from the schema itself. */
function requiredInProduction(app: string): string[] {
  return problems(app, { NODE_ENV: 'production' }).flatMap((p) => /^(\w+) is required$/.exec(p)?.[1] ?? []);
}

/** The edge has no SHUTDOWN_TIMEOUT_MS (its stop waits for open requests): it is held to the default every other app has. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = (baseEnv.SHUTDOWN_TIMEOUT_MS.describe().flags as { default: number }).default;

function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}
const hostOf = (value: string) => {
  try {
    return new URL(value).hostname;
  } catch {
    return undefined;
  }
};

// ---- network policies ----------------------------------------------------------------------------

const policiesFor = (overlay: Overlay, labels: Labels, type: 'Ingress' | 'Egress') =>
  ofKind<NetworkPolicySpec>(overlay, 'NetworkPolicy').filter((p) => p.spec.policyTypes.includes(type) && selects(p.spec.podSelector, labels));

const portAllowed = (rule: PolicyRule, port: number, name?: string, protocol = 'TCP') =>
  !rule.ports?.length || rule.ports.some((p) => (p.protocol ?? 'TCP') === protocol && (p.port === undefined || p.port === port || p.port === name));

/** The selectors of the same-namespace pods a peer list names (no namespaceSelector). */
const podPeers = (peers: Peer[] | undefined): LabelSelector[] =>
  (peers ?? []).flatMap((p) => (p.podSelector && !p.namespaceSelector && !p.ipBlock ? [p.podSelector] : []));

interface Callee {
  app: string;
  labels: Labels;
  port: number;
  portName?: string;
}

/** The apps this app calls: its configuration's URLs that name one of the overlay's Services. */
function callees(overlay: Overlay, config: Record<string, unknown>): Callee[] {
  return strings(config).flatMap((value) => {
    const host = /^https?:/.test(value) ? hostOf(value) : undefined;
    const service = host && named<ServiceSpec>(overlay, 'Service', host.split('.')[0]);
    if (!service) return [];
    const app = APPS.find((a) => selects({ matchLabels: service.spec.selector }, deployment(overlay, a).labels));
    if (!app) return [];
    const { container, labels } = deployment(overlay, app);
    const target = service.spec.ports[0].targetPort;
    const port = portNumber(container, target) as number;
    return [{ app, labels, port, portName: container.ports?.find((p) => p.containerPort === port)?.name }];
  });
}

function egressAllowed(overlay: Overlay, from: Labels, to: Callee) {
  return policiesFor(overlay, from, 'Egress').some((p) =>
    (p.spec.egress ?? []).some((r) => (!r.to?.length || podPeers(r.to).some((peer) => selects(peer, to.labels))) && portAllowed(r, to.port, to.portName)),
  );
}

function ingressAllowed(overlay: Overlay, from: Labels, to: Callee) {
  return policiesFor(overlay, to.labels, 'Ingress').some((p) =>
    (p.spec.ingress ?? []).some((r) => (!r.from?.length || podPeers(r.from).some((peer) => selects(peer, from))) && portAllowed(r, to.port, to.portName)),
  );
}

/** Explicit ports this pod may open connections to. */
const egressPorts = (overlay: Overlay, labels: Labels) =>
  policiesFor(overlay, labels, 'Egress').flatMap((p) => (p.spec.egress ?? []).flatMap((r) => (r.ports ?? []).map((x) => x.port)));

const appOfLabels = (overlay: Overlay, labels: LabelSelector) =>
  APPS.filter((a) => rendered[overlay].some((m) => m.kind === 'Deployment' && m.metadata.name === a) && selects(labels, deployment(overlay, a).labels));

// ---- the checks ----------------------------------------------------------------------------------

it("derives what production requires from the apps' schemas (admin-api: the admin token and its keys)", () => {
  expect(requiredInProduction('admin-api')).toEqual(expect.arrayContaining(['ADMIN_TOKEN', 'SECRETS_KEY', 'IDENTITY_EVENTS_KEY']));
});

describe.each(OVERLAYS)('the %s overlay', (overlay) => {
  it('has a Deployment for every app of apps/ (the lock-cloud simulator in the local overlay only)', () => {
    const deployed = ofKind<DeploymentSpec>(overlay, 'Deployment')
      .filter((d) => d.metadata.labels?.['app.kubernetes.io/part-of'] === 'smartlock')
      .map((d) => d.metadata.name)
      .sort();
    expect(deployed).toEqual(appsOf(overlay));
  });

  it('denies all traffic by default and lets every pod resolve names', () => {
    const forEveryPod = ofKind<NetworkPolicySpec>(overlay, 'NetworkPolicy').filter(
      (p) => !p.spec.podSelector.matchLabels && !p.spec.podSelector.matchExpressions,
    );
    const denyAll = forEveryPod.find((p) => p.spec.policyTypes.includes('Ingress') && p.spec.policyTypes.includes('Egress'));
    expect(denyAll).toBeDefined();
    expect([...(denyAll?.spec.ingress ?? []), ...(denyAll?.spec.egress ?? [])]).toEqual([]);
    const dns = forEveryPod.flatMap((p) => p.spec.egress ?? []).filter((r) => r.ports?.length && portAllowed(r, 53, undefined, 'UDP'));
    expect(dns).not.toEqual([]);
  });

  it('exposes the edge whole and of the ingest gateway only /webhook: every other Service is ClusterIP, and an Ingress routes nothing else (issue 46)', () => {
    // The ingest gateway also answers /metrics, the operator's replay and the portal's event routes (through the edge).
    const services = ofKind<{ type?: string }>(overlay, 'Service').filter((s) => s.metadata.name !== 'edge');
    expect(services.filter((s) => (s.spec.type ?? 'ClusterIP') !== 'ClusterIP').map((s) => s.metadata.name)).toEqual([]);
    type IngressSpec = { rules?: { http?: { paths: { path: string; pathType: string; backend: { service: { name: string } } }[] } }[] };
    const routes = ofKind<IngressSpec>(overlay, 'Ingress').flatMap((i) => (i.spec.rules ?? []).flatMap((r) => r.http?.paths ?? []));
    expect(routes.filter((p) => p.backend.service.name !== 'edge').map((p) => [p.backend.service.name, p.path, p.pathType])).toEqual(
      overlay === 'production' ? [['ingest-gateway', '/webhook', 'Prefix']] : [],
    );
  });

  describe.each(appsOf(overlay))('%s', (app) => {
    const env = () => environment(overlay, deployment(overlay, app).container);
    const config = () => readConfigs[app](env());

    it('runs the image of deploy/Dockerfile as non-root with a read-only root filesystem and a writable /tmp', () => {
      const { pod, container } = deployment(overlay, app);
      expect(container.image).toMatch(new RegExp(`(^|/)smartlock/${app}(:|@|$)`));
      expect(pod.securityContext?.runAsNonRoot ?? container.securityContext?.runAsNonRoot).toBe(true);
      expect(pod.securityContext?.runAsUser ?? container.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      const tmp = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
      expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
    });

    it('is given every variable its config schema requires in production, with values the schema accepts', () => {
      const given = env();
      expect(given.NODE_ENV ?? 'production').toBe('production');
      const missing = requiredInProduction(app).filter((name) => !(name in given));
      expect(missing).toEqual([]);
      expect(problems(app, given)).toEqual([]);
    });

    it('names the other apps and its database and broker, never a development default on loopback', () => {
      // An app without a broker user (libs/messaging APP_BROKER_ACCESS) never connects to its AMQP_URL.
      const unused = app in APP_BROKER_ACCESS ? [] : ['AMQP_URL'];
      const used = Object.entries(config()).filter(([name]) => !unused.includes(name));
      const onLoopback = used.flatMap(([, value]) => strings(value)).filter((v) => ['127.0.0.1', 'localhost', '[::1]'].includes(hostOf(v) ?? ''));
      expect(onLoopback).toEqual([]);
    });

    it('probes /healthz (liveness) and /readyz (readiness) on the port it listens on', () => {
      const { container } = deployment(overlay, app);
      const listens = config().PORT;
      expect(container.livenessProbe?.httpGet).toMatchObject({ path: '/healthz' });
      expect(container.readinessProbe?.httpGet).toMatchObject({ path: '/readyz' });
      expect(portNumber(container, container.livenessProbe?.httpGet?.port)).toBe(listens);
      expect(portNumber(container, container.readinessProbe?.httpGet?.port)).toBe(listens);
    });

    it('is given longer to stop than its drain: the preStop pause, then consumers and HTTP requests, each up to SHUTDOWN_TIMEOUT_MS', () => {
      const { pod, container } = deployment(overlay, app);
      const shutdownMs = (config().SHUTDOWN_TIMEOUT_MS as number | undefined) ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
      const preStop = container.lifecycle?.preStop;
      const pauseS = preStop?.sleep?.seconds ?? (preStop?.exec?.command[0] === 'sleep' ? Number(preStop.exec.command[1]) : 0);
      expect((pod.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThan(pauseS * 1000 + 2 * shutdownMs);
    });

    it('has CPU and memory requests, a memory limit, a PodDisruptionBudget and a Service', () => {
      const { container, labels } = deployment(overlay, app);
      expect(container.resources?.requests).toEqual(expect.objectContaining({ cpu: expect.any(String), memory: expect.any(String) }));
      expect(container.resources?.limits?.memory).toEqual(expect.any(String));
      const pdbs = ofKind<{ selector: LabelSelector; maxUnavailable?: number; minAvailable?: number }>(overlay, 'PodDisruptionBudget').filter((p) =>
        selects(p.spec.selector, labels),
      );
      expect(pdbs).toHaveLength(1);
      const services = ofKind<ServiceSpec>(overlay, 'Service').filter((s) => selects({ matchLabels: s.spec.selector }, labels));
      expect(services.map((s) => portNumber(container, s.spec.ports[0].targetPort))).toEqual([config().PORT]);
    });

    if (app !== SIMULATOR) {
      it(QUEUE_SCALED.includes(app) ? 'is scaled by KEDA on every queue it consumes, counting unacknowledged messages' : 'is scaled by an HPA on CPU', () => {
        const scaledObjects = ofKind<{ scaleTargetRef: { name: string }; triggers: Trigger[] }>(overlay, 'ScaledObject').filter(
          (s) => s.spec.scaleTargetRef.name === app,
        );
        const hpas = ofKind<{ scaleTargetRef: { kind: string; name: string }; metrics: { type: string; resource?: { name: string } }[] }>(
          overlay,
          'HorizontalPodAutoscaler',
        ).filter((h) => h.spec.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === app);
        if (!QUEUE_SCALED.includes(app)) {
          expect(scaledObjects).toEqual([]);
          expect(hpas).toHaveLength(1);
          expect(hpas[0].spec.metrics).toContainEqual(expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }));
          return;
        }
        expect(hpas).toEqual([]); // KEDA makes its own
        expect(scaledObjects).toHaveLength(1);
        const triggers = scaledObjects[0].spec.triggers;
        const consumed = APP_BROKER_ACCESS[app as keyof typeof APP_BROKER_ACCESS].consumes.map((q) => q.name);
        expect(triggers.map((t) => t.metadata.queueName).sort()).toEqual([...consumed].sort());
        for (const t of triggers) {
          expect(t).toMatchObject({ type: 'rabbitmq', metadata: { protocol: 'http', mode: 'QueueLength' } });
          const auth = named<{ secretTargetRef: { parameter: string; name: string; key: string }[] }>(
            overlay,
            'TriggerAuthentication',
            t.authenticationRef?.name ?? '',
          );
          const host = auth?.spec.secretTargetRef.find((r) => r.parameter === 'host');
          expect(host && secret(overlay, host.name)?.[host.key]).toMatch(/^https?:\/\/[^/]+:\d+\//);
        }
      });
    }

    it('reaches the apps it calls, its database and its broker, and nothing else of ours', () => {
      const { labels } = deployment(overlay, app);
      const given = env();
      const calls = callees(overlay, config());
      for (const callee of calls) {
        expect({ callee: callee.app, egress: egressAllowed(overlay, labels, callee) }).toEqual({ callee: callee.app, egress: true });
        expect({ callee: callee.app, ingress: ingressAllowed(overlay, labels, callee) }).toEqual({ callee: callee.app, ingress: true });
      }
      // No path to an app it does not call.
      const reached = policiesFor(overlay, labels, 'Egress').flatMap((p) =>
        (p.spec.egress ?? []).flatMap((r) => podPeers(r.to).flatMap((peer) => appOfLabels(overlay, peer))),
      );
      expect([...new Set(reached)].sort()).toEqual([...new Set(calls.map((c) => c.app))].sort());
      // MongoDB and RabbitMQ: their ports only for the apps that have them.
      const ports = egressPorts(overlay, labels);
      const portOf = (url: string | undefined, fallback: number) => (url ? Number(new URL(url).port || fallback) : undefined);
      const mongo = portOf(given.MONGO_URL, 27017);
      const amqp = portOf(given.AMQP_URL, given.AMQP_URL?.startsWith('amqps:') ? 5671 : 5672);
      if (mongo) expect(ports).toContain(mongo);
      else expect(ports).not.toContain(27017);
      if (amqp) expect(ports).toContain(amqp);
      else expect(ports).not.toContain(5672);
    });

    it(PUBLIC.includes(app) ? 'is reachable from outside' : 'is reachable only from the apps that call it (and Prometheus)', () => {
      const { labels, container } = deployment(overlay, app);
      const rules = policiesFor(overlay, labels, 'Ingress').flatMap((p) => p.spec.ingress ?? []);
      const open = rules.filter((r) => !r.from?.length);
      if (PUBLIC.includes(app)) {
        expect(open.length).toBeGreaterThan(0);
        return;
      }
      expect(open).toEqual([]);
      const callers = appsOf(overlay).filter((other) => {
        const c = deployment(overlay, other);
        return callees(overlay, readConfigs[other](environment(overlay, c.container))).some((x) => x.app === app);
      });
      const allowed = rules.flatMap((r) => podPeers(r.from).flatMap((peer) => appOfLabels(overlay, peer)));
      expect([...new Set(allowed)].sort()).toEqual(callers.sort());
      // From other namespaces: Prometheus only, on the app's port.
      const fromNamespaces = rules.filter((r) => (r.from ?? []).some((peer) => peer.namespaceSelector));
      for (const r of fromNamespaces) {
        expect(r.from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
        const [port] = container.ports ?? [];
        expect(portAllowed(r, port.containerPort, port.name)).toBe(true);
      }
    });
  });
});
