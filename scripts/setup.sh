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
