#!/usr/bin/env bash
# Every test: dependencies and infrastructure first (once for the whole run), then type check, lint,
# build, the unit and integration tests of every project (real broker, real database), and the
# end-to-end suite against the apps running as processes. Ends with "N passed, N failed".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false NX_SKIP_NX_CACHE=true FORCE_COLOR=0
RESULTS=.data/test-results
started=$(date +%s)

bash scripts/setup.sh
bash scripts/infra.sh
rm -rf "$RESULTS" && mkdir -p "$RESULTS"

summary() {
  node -e '
    const fs = require("fs"), dir = process.argv[1];
    let passed = 0, failed = 0, skipped = 0, suites = 0;
    for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      const r = JSON.parse(fs.readFileSync(`${dir}/${f}`, "utf8"));
      passed += r.numPassedTests; failed += r.numFailedTests + r.numRuntimeErrorTestSuites; skipped += r.numPendingTests; suites += r.numTotalTestSuites;
    }
    console.log(`\n${suites} test files in ${Math.round((Date.now() / 1000 - Number(process.argv[2])))} s`);
    console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
  ' "$RESULTS" "$started"
}
trap summary EXIT

if command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1; then
  echo "== docker-compose.yml"
  compose="docker-compose"; command -v docker-compose >/dev/null 2>&1 || compose="docker compose"
  ADMIN_TOKEN=compose-check-token SECRETS_KEY="$(printf '0%.0s' {1..64})" $compose -f docker-compose.yml config -q
fi
phase() { echo "== $1 (at $(($(date +%s) - started)) s)"; }
phase "type check, lint and build, side by side"
# Three jobs that need nothing of each other, each keeping about one core busy: side by side on 2
# cores, 40 s against 48 s one after another (load 1-4; lint, the longest, 27 s alone). Each one's
# output is printed whole once all have ended, and any failure fails the run.
# Nx's project graph is computed first, once: lint's module-boundary rule and the build both read it.
npx nx show projects >/dev/null
checks=.data/checks
rm -rf "$checks" && mkdir -p "$checks"
npx tsc -p tsconfig.json >"$checks/type-check.log" 2>&1 &
tsc_pid=$!
# The whole tree, and a check that the module-boundary rule really ran (scripts/lint.sh).
bash scripts/lint.sh >"$checks/lint.log" 2>&1 &
lint_pid=$!
npx nx run-many -t build --output-style=stream-without-prefixes >"$checks/build.log" 2>&1 &
build_pid=$!
failed=""
for job in "type-check $tsc_pid" "lint $lint_pid" "build $build_pid"; do
  set -- $job
  if wait "$2"; then echo "== $1: passed"; else echo "== $1: FAILED" && failed="$failed $1"; fi
  cat "$checks/$1.log"
done
[ -z "$failed" ] || { echo "failed:$failed" >&2; exit 1; }
phase "unit and integration tests"
# Every project in one jest run (jest.config.js), two test files at a time: on 2 cores more
# parallelism made timing-sensitive tests (replicas, retries) flaky without making the run shorter.
# The files that launch the whole system (*.system.test.ts: eight processes each) run after, one at a
# time: two launches side by side beside the other files left an app unready after 30 s in CI.
# A phase that fails does not stop the next ones: one run reports every failing test.
status=0
npx jest -c jest.config.js --logHeapUsage --json --outputFile="$RESULTS/unit.json" --testPathPattern '^(?!.*\.system\.test\.ts$)' || status=1
phase "whole-system tests of the projects, one at a time"
npx jest -c jest.config.js --runInBand --logHeapUsage --json --outputFile="$RESULTS/system.json" --testPathPattern '\.system\.test\.ts$' || status=1
phase "end-to-end"
npx nx run e2e:e2e --output-style=stream-without-prefixes || status=1
exit $status
