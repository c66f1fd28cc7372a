import axios from 'axios';
import { System, waitFor } from '@smartlock/testing';

// Load and settling helpers of the fault tests: a company of its own per fault (its event counts
// are that fault's alone), bookings sent in bursts or at a steady rate, and the wait for every
// accepted event to reach a final status, read through the customer's GET /webhook/events.

export const ROOMS = 50;
const FINAL = ['COMPLETED', 'FAILED', 'DEAD_LETTER'];
/**
 * How a FAILED publish with an automatic retry still ahead begins (SPEC "Transitions": retries
 * 1, 2, 3 follow): that FAILED is not final. Processing failures and DEAD_LETTER do not say it.
 */
const PUBLISH_RETRY_PENDING = /^Could not queue the event: .*automatic retry \d+ of \d+ scheduled$/;

export interface Company {
  companyId: string;
  key: string;
  token: string;
  lockPrefix: string;
}

export interface Sent {
  ref: string;
  startedAt: number;
  endedAt: number;
  status: number; // 0: no HTTP answer
  eventId?: string;
  body?: { success?: boolean; message?: string; errors?: unknown };
}

export interface EventState {
  status: string;
  message: string | null;
}

const isFinal = (e: EventState | undefined): boolean =>
  !!e && FINAL.includes(e.status) && !(e.status === 'FAILED' && PUBLISH_RETRY_PENDING.test(e.message ?? ''));

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** Answers by HTTP status and message, for a failure's report. */
export const answers = (sent: Sent[]) => {
  const by: Record<string, number> = {};
  for (const s of sent) {
    const key = `${s.status} ${s.body?.message ?? ''}`.trim();
    by[key] = (by[key] ?? 0) + 1;
  }
  return by;
};

export const logFault = (fault: string, figures: Record<string, unknown>) => console.log(`[fault] ${fault}: ${JSON.stringify(figures)}`);

/** The apps' last warnings and errors, for a failure's report. */
export const diagnostics = (sys: System) =>
  sys
    .processes()
    .map((p, i) => {
      const nth = sys
        .processes()
        .slice(0, i)
        .filter((q) => q.name === p.name).length;
      const lines = sys
        .logs(p.name, nth)
        .split('\n')
        .filter((l) => /"level":"(warn|error)"/.test(l));
      return `${p.name}: ${lines.slice(-8).join('\n').slice(0, 3000)}`;
    })
    .join('\n');

export async function book(sys: System, c: Company, ref: string, i: number): Promise<Sent> {
  const startedAt = Date.now();
  const body = {
    reference_id: ref,
    action: 'create',
    room_number: String((i % ROOMS) + 1),
    check_in: '2031-05-01T15:00:00Z',
    check_out: '2031-05-04T11:00:00Z',
  };
  try {
    const res = await axios.post(`${sys.webhookUrl}/webhook/t/${c.token}`, body, { validateStatus: () => true, timeout: 30_000 });
    return { ref, startedAt, endedAt: Date.now(), status: res.status, eventId: res.status === 202 ? res.data.eventId : undefined, body: res.data };
  } catch {
    return { ref, startedAt, endedAt: Date.now(), status: 0 };
  }
}

/** `count` bookings, `concurrency` at a time. */
export async function burst(sys: System, c: Company, prefix: string, count: number, concurrency: number): Promise<Sent[]> {
  const sent: Sent[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        sent.push(await book(sys, c, `${prefix}-${i}`, i));
      }
    }),
  );
  return sent;
}

/** One booking every 1000/rate ms (open loop: an outage does not slow the sender) until `done()` or `stop()`. */
export function steady(sys: System, c: Company, prefix: string, ratePerS: number, done: (sent: Sent[]) => boolean) {
  const sent: Sent[] = [];
  const pending: Promise<void>[] = [];
  let stopped = false;
  const finished = (async () => {
    for (let i = 0; !stopped && !done(sent); i++) {
      pending.push(book(sys, c, `${prefix}-${i}`, i).then((s) => void sent.push(s)));
      // pacing of the load, not a wait for state
      await new Promise((r) => setTimeout(r, 1000 / ratePerS));
    }
    await Promise.all(pending);
    return sent;
  })();
  /** Ends the load early (a failed test must not leave it running: Jest would never exit). */
  const stop = () => {
    stopped = true;
  };
  return { sent, finished, stop };
}

export const count = async (sys: System, c: Company, status: string): Promise<number> =>
  (await axios.get(`${sys.webhookUrl}/webhook/events`, { params: { status, pageSize: 1 }, headers: { apikey: c.key } })).data.pagination.total;

/** Every event of the company: event id → status and message. */
async function statuses(sys: System, c: Company): Promise<Map<string, EventState>> {
  const all = new Map<string, EventState>();
  for (let page = 1; ; page++) {
    const res = await axios.get(`${sys.webhookUrl}/webhook/events`, { params: { page, pageSize: 100 }, headers: { apikey: c.key } });
    for (const e of res.data.events as ({ event_id: string } & EventState)[]) all.set(e.event_id, { status: e.status, message: e.message });
    if (page >= res.data.pagination.totalPages) return all;
  }
}

/**
 * Waits until every accepted event is final; returns how many ended in each status, how many
 * COMPLETED, and the others with their message.
 */
export async function settle(sys: System, c: Company, accepted: Sent[], timeoutMs: number) {
  const ids = accepted.map((s) => s.eventId as string);
  const tally = (byId: Map<string, EventState>) => {
    const by: Record<string, number> = {};
    for (const id of ids) by[byId.get(id)?.status ?? 'missing'] = (by[byId.get(id)?.status ?? 'missing'] ?? 0) + 1;
    return by;
  };
  const final = await waitFor(
    async () => {
      // cheap pre-check (one small read per status) before the full listing
      if ((await Promise.all(FINAL.map((s) => count(sys, c, s)))).reduce((a, b) => a + b, 0) < ids.length) return undefined;
      const byId = await statuses(sys, c);
      return ids.every((id) => isFinal(byId.get(id))) ? byId : undefined;
    },
    { timeoutMs, intervalMs: 1000, what: `${ids.length} accepted events to reach a final status` },
  ).catch(async (err) => {
    throw new Error(`${err.message}; statuses: ${JSON.stringify(tally(await statuses(sys, c)))}; ${diagnostics(sys)}`);
  });
  const notCompleted = ids.filter((id) => final.get(id)?.status !== 'COMPLETED').map((id) => `${id}: ${final.get(id)?.status} ${final.get(id)?.message}`);
  return { byStatus: tally(final), completed: ids.length - notCompleted.length, notCompleted };
}

/**
 * Waits until every accepted event is final, reading each by its id (`GET /webhook/events/:eventId`,
 * as an integrator polls): unlike the listing, a read the database serves by an index, so a test
 * that counts the path's statements does not count its own scans. Returns the final statuses.
 */
export async function settleEach(sys: System, c: Company, accepted: Sent[], timeoutMs: number): Promise<Map<string, EventState>> {
  const final = new Map<string, EventState>();
  const deadline = Date.now() + timeoutMs;
  let pending = accepted.map((s) => s.eventId as string);
  while (pending.length) {
    if (Date.now() > deadline) throw new Error(`${pending.length} of ${accepted.length} events not final after ${timeoutMs} ms; ${diagnostics(sys)}`);
    const still: string[] = [];
    for (const id of pending) {
      const res = await axios.get(`${sys.webhookUrl}/webhook/events/${id}`, { headers: { apikey: c.key }, validateStatus: () => true });
      const e = res.data?.event ?? res.data;
      if (isFinal(e)) final.set(id, { status: e.status, message: e.message });
      else still.push(id);
    }
    pending = still;
    if (pending.length) await new Promise((r) => setTimeout(r, 500));
  }
  return final;
}

/** A company with a layout of ROOMS rooms, one lock each, an API key and an ingest token for its site. */
export async function onboard(sys: System, name: string, lockPrefix: string): Promise<Company> {
  const admin = axios.create({ baseURL: sys.baseUrl, headers: { Authorization: `Bearer ${sys.adminToken}` } });
  const companyId = (await admin.post('/admin/v1/companies', { name })).data._id;
  const key = (await admin.post(`/admin/v1/companies/${companyId}/api-keys`, { name: 'pms' })).data.key;
  const rooms = Array.from({ length: ROOMS }, (_, i) => ({
    name: String(i + 1),
    locks: [{ lock_id: `${lockPrefix}-${i + 1}`, lock_mac: `AA:00:00:00:${(i + 1).toString(16).padStart(2, '0')}:00` }],
  }));
  await admin.put(`/admin/v1/companies/${companyId}/layout`, { sites: [{ name: 'Main', buildings: [{ name: 'A', floors: [{ name: '1', rooms }] }] }] });
  const sites = (await axios.get(`${sys.baseUrl}/api/v4/location/sites`, { headers: { apikey: key } })).data.data.sites;
  const token = (await admin.post(`/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: sites[0]._id })).data.token;
  const c = { companyId, key, token, lockPrefix };
  // A hotel is set up before its bookings arrive: one booking completes before the load, so the
  // worker's layout replica has the whole import before the fault.
  const first = await book(sys, c, `${lockPrefix}-WARMUP`, 0);
  if (first.status !== 202) throw new Error(`the warm-up booking was refused: ${first.status} ${JSON.stringify(first.body)}`);
  await settle(sys, c, [first], 120_000);
  return c;
}
