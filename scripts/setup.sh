#!/usr/bin/env bash
# Installs the Node dependencies when they are missing or older than the lock file. Idempotent.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -d node_modules ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing Node dependencies (npm install, from package-lock.json)"
  # Not `npm ci`: this npm writes lock files without the other platforms' optional packages of
  # @swc/core, and `npm ci` then refuses the lock as out of sync. `npm install` installs the
  # locked versions all the same.
  npm install --no-audit --no-fund --loglevel=error
else
  echo "setup: Node dependencies up to date"
fi

# The portal's browser test drives Debian's Chromium through playwright-core, which downloads no
# browser (`npx playwright install` cannot work on a closed network).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium package (the portal's browser test)"
    apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y --no-install-recommends chromium >/dev/null; }
  else
    echo "setup: chromium is missing: install Debian's chromium package (apt-get install chromium) for the browser test"
  fi
fi

# promtool, from Debian's prometheus package: npm test checks deploy/observability's alert rules and
# runs their unit tests with it (deploy/observability/observability.test.ts).
if ! command -v promtool >/dev/null 2>&1; then
  echo "setup: installing Debian's prometheus package (for promtool)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends prometheus >/dev/null
else
  echo "setup: promtool present"
fi
