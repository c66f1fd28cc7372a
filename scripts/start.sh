#!/usr/bin/env bash
# Starts the whole system locally: infrastructure, every app (each its own process), the lock-cloud
# simulator, and the edge; seeds demo data; prints the two URLs. Ctrl-C stops everything gracefully.
#   {base_url}    = http://127.0.0.1:8080  (edge -> location-api, access-api, admin-api, dispatcher)
#   {webhook_url} = http://127.0.0.1:8090  (ingest-gateway)
# WORKERS=N and DISPATCHERS=N run that many provisioning-worker / callback-dispatcher processes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false

bash scripts/setup.sh
bash scripts/infra.sh
npx nx run-many -t build --output-style=stream-without-prefixes >/dev/null
set -a
# shellcheck disable=SC1091
. .data/infra.env
NODE_ENV="${NODE_ENV:-development}"
# Callbacks to local receivers (127.0.0.1) in the demo: the development switch, never in production.
[ "$NODE_ENV" = production ] || CALLBACK_ALLOW_LOOPBACK="${CALLBACK_ALLOW_LOOPBACK:-true}"
# Guest e-mail and SMS to the simulator's local mail relay and SMS API, shown on its page
# http://127.0.0.1:8086/sim/guest-messages (SIM_GUEST_SINK): development only, and only where no
# real relay or provider is set (SMTP_HOST, SMS_API_URL).
GUEST_SINK=
if [ "$NODE_ENV" != production ]; then
  SIM_GUEST_SINK="${SIM_GUEST_SINK:-true}"
  SIM_SMTP_PORT="${SIM_SMTP_PORT:-2525}"
  if [ "$SIM_GUEST_SINK" = true ]; then
    GUEST_SINK=http://127.0.0.1:8086/sim/guest-messages
    if [ -z "${SMTP_HOST:-}" ]; then SMTP_HOST=127.0.0.1 SMTP_PORT=$SIM_SMTP_PORT SMTP_ALLOW_PLAINTEXT=true; fi
    if [ -z "${SMS_API_URL:-}" ]; then
      SMS_API_URL=http://127.0.0.1:8086/sms SMS_ACCOUNT_SID=ACdemo SMS_AUTH_TOKEN=demo-sms-token SMS_FROM=+15550000000
    fi
  fi
fi
ADMIN_TOKEN="${ADMIN_TOKEN:-dev-admin-token}"
LOCK_CLOUD_URL="${LOCK_CLOUD_URL:-http://127.0.0.1:8086}"
set +a

LOGS=.data/logs
mkdir -p "$LOGS"
PIDS=()
run() { # name port [instance]
  local name=$1 port=$2 log="$LOGS/$1${3:+-$3}.log"
  PORT=$port node "dist/apps/$name/main.js" >>"$log" 2>&1 &
  PIDS+=($!)
  echo "start: $name${3:+ #$3} on :$port (pid $!, log $log)"
}
stop_all() {
  echo "stopping..."
  kill -TERM "${PIDS[@]}" 2>/dev/null || true
  wait "${PIDS[@]}" 2>/dev/null || true
  exit 0
}
trap stop_all INT TERM

run lock-cloud-simulator 8086
run admin-api 8083
run location-api 8081
run access-api 8082
run ingest-gateway 8090
for ((i = 0; i < ${WORKERS:-1}; i++)); do run provisioning-worker $((8085 + i * 100)) "$i"; done
for ((i = 0; i < ${DISPATCHERS:-1}; i++)); do run callback-dispatcher $((8084 + i * 100)) "$i"; done
run edge 8080

for port in 8086 8083 8081 8082 8090 8085 8084 8080; do
  for ((t = 0; t < 120; t++)); do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
    sleep 0.25
  done
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || { echo "start: the app on :$port is not ready; see $LOGS"; stop_all; }
done

# Demo data for integrators, through the admin API on the edge (tools/seed): company "Demo Hotel"
# (reused across runs) with its own Nuki account at the simulator (LOCK_CLOUD_URL, also Nuki's Web
# API here) connected and its lock bound to room 105, a fresh API key and an ingest token for site
# demo-site, printed once.
node dist/tools/seed.js || echo "start: demo data not seeded"


cat <<MSG

The system is up.
  {base_url}    http://127.0.0.1:8080   (admin: Authorization: Bearer $( [ "$ADMIN_TOKEN" = dev-admin-token ] && echo dev-admin-token || echo '$ADMIN_TOKEN'))
  {webhook_url} http://127.0.0.1:8090
  lock cloud    $LOCK_CLOUD_URL   (simulator)
${GUEST_SINK:+  guest mail    $GUEST_SINK   (the e-mails and SMS guests would get)
}  RabbitMQ      http://127.0.0.1:15672 (guest/guest)
Logs in $LOGS. Ctrl-C stops everything.
MSG
wait
