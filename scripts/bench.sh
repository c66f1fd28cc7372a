#!/usr/bin/env bash
# Every benchmark in one go, on this machine; writes bench/report.md and bench/report.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
bash scripts/setup.sh
bash scripts/infra.sh
set -a
# shellcheck disable=SC1091
. .data/infra.env
set +a
npx nx run-many -t build --output-style=stream-without-prefixes >/dev/null
node bench/report.mjs
