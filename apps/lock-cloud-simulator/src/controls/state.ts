import { randomUUID } from 'node:crypto';

/**
 * Test controls live in memory: they describe the current experiment, not vendor state, and a
 * restart (or POST /sim/reset) starting clean is what a test wants.
 */

export interface FailureRule {
  id: string;
  /** Vendor path, e.g. `/v3/key/send`; omitted: every operation. */
  path?: string;
  /** Omitted: every lock (and calls that name none). */
  lockId?: string;
  /** Calls still to fail; omitted: always. */
  remaining?: number;
  errcode?: number;
  errmsg?: string;
  httpStatus?: number;
  hang?: boolean;
  hangMs?: number;
  /**
   * Carry the call out after this delay, even if the caller gave up meanwhile: the vendor applying
   * a call the client timed out on (a late copy of a key).
   */
  slowMs?: number;
}

export interface CallRecord {
  at: string;
  method: string;
  path: string;
  lockId?: string;
  errcode: number;
  httpStatus: number;
  injected: boolean;
  durationMs: number;
}

const MAX_LOG = 5000;

export function createControls(defaultLatencyMs: number) {
  let globalLatency = defaultLatencyMs;
  const latencyByPath = new Map<string, number>();
  let rules: FailureRule[] = [];
  let log: CallRecord[] = [];
  const counts = new Map<string, { total: number; ok: number; errors: number }>();

  return {
    latencyFor(path: string): number {
      return latencyByPath.get(path) ?? globalLatency;
    },
    setLatency(ms: number, path?: string) {
      if (path) {
        if (ms === 0) latencyByPath.delete(path);
        else latencyByPath.set(path, ms);
      } else globalLatency = ms;
      return this.latency();
    },
    latency() {
      return { ms: globalLatency, byPath: Object.fromEntries(latencyByPath) };
    },

    addFailure(rule: Omit<FailureRule, 'id'>): FailureRule {
      const r = { id: randomUUID(), ...rule };
      rules.push(r);
      return r;
    },
    /** The first rule matching the call, consumed once if it counts down. */
    takeFailure(path: string, lockId: string | undefined): FailureRule | undefined {
      const rule = rules.find((r) => (!r.path || r.path === path) && (!r.lockId || r.lockId === lockId));
      if (!rule) return undefined;
      if (rule.remaining !== undefined) {
        rule.remaining -= 1;
        if (rule.remaining <= 0) rules = rules.filter((r) => r !== rule);
      }
      return { ...rule };
    },
    failures: () => rules.map((r) => ({ ...r })),
    clearFailures(): number {
      const n = rules.length;
      rules = [];
      return n;
    },

    record(call: CallRecord) {
      log.push(call);
      if (log.length > MAX_LOG) log = log.slice(-MAX_LOG);
      const c = counts.get(call.path) ?? { total: 0, ok: 0, errors: 0 };
      c.total += 1;
      if (call.errcode === 0 && call.httpStatus >= 200 && call.httpStatus < 300) c.ok += 1;
      else c.errors += 1;
      counts.set(call.path, c);
    },
    calls(filter: { path?: string; lockId?: string }) {
      const matching = log.filter((c) => (!filter.path || c.path === filter.path) && (!filter.lockId || c.lockId === filter.lockId));
      return {
        total: [...counts.values()].reduce((s, c) => s + c.total, 0),
        byPath: Object.fromEntries(counts),
        matching: matching.length,
        calls: matching.slice(-1000),
      };
    },

    reset() {
      globalLatency = defaultLatencyMs;
      latencyByPath.clear();
      rules = [];
      log = [];
      counts.clear();
    },
  };
}
export type Controls = ReturnType<typeof createControls>;
