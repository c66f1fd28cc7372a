#!/usr/bin/env bash
# Runs the end-to-end suite (e2e/jest.config.js) in two jest processes side by side: the files that
# mostly wait out a fault they set up (E2E_LANE=waits: a callback endpoint down for a minute, a lock
# vendor cut for two minutes, a few bookings in flight) beside all the others, one file at a time
# each (E2E_LANE=main). The waits then overlap the CPU-bound files instead of adding to them.
# The waiting lane's output is printed once it has ended; either lane failing fails the run.
# The build must be current (npm run build); results go to .data/test-results/e2e*.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .data/test-results
# Not in .data/test-results/, where npm test reads every file as a jest result.
log=.data/e2e-waits.log
E2E_LANE=waits npx jest -c e2e/jest.config.js --runInBand --logHeapUsage --json --outputFile=.data/test-results/e2e-waits.json >"$log" 2>&1 &
waits=$!
main=0
E2E_LANE=main npx jest -c e2e/jest.config.js --runInBand --logHeapUsage --json --outputFile=.data/test-results/e2e.json || main=$?
rc=0
wait "$waits" || rc=$?
echo "== end-to-end, the waiting files (run beside the others):"
cat "$log"
rm -f "$log"
[ "$main" = 0 ] && [ "$rc" = 0 ]
