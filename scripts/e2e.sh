#!/usr/bin/env bash
# The end-to-end suite alone: the apps as separate processes against the real broker and database.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
bash scripts/setup.sh
bash scripts/infra.sh
npx nx run-many -t build --output-style=stream-without-prefixes
npx nx run e2e:e2e --output-style=stream-without-prefixes
