/** Readiness: each dependency reports whether it can serve now. */
export interface Readiness {
  add(name: string, check: () => boolean): void;
  report(): { ready: boolean; checks: Record<string, boolean> };
}

export function createReadiness(): Readiness {
  const checks = new Map<string, () => boolean>();
  return {
    add(name, check) {
      checks.set(name, check);
    },
    report() {
      const out: Record<string, boolean> = {};
      let ready = true;
      for (const [name, check] of checks) {
        let ok = false;
        try {
          ok = check();
        } catch {
          ok = false;
        }
        out[name] = ok;
        ready &&= ok;
      }
      return { ready, checks: out };
    },
  };
}
