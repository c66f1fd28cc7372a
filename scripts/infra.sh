#!/usr/bin/env bash
# Brings up what the system needs, idempotently, and prints what it used:
#   RabbitMQ at 127.0.0.1:5672 (running -> start -> install Debian's package), with the plugins the
#   topology needs; a MongoDB-wire server ($MONGO_URL -> something already answering on 27017 ->
#   mongod on PATH -> FerretDB 1.x, built once with Go and reused, on the local PostgreSQL when there
#   is one (FERRETDB_BACKEND=postgresql, the default) else on SQLite under .data/).
# Writes .data/infra.env (MONGO_URL, AMQP_URL) for the other scripts and the tests.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="$ROOT/.data"
mkdir -p "$DATA"

AMQP_HOST=127.0.0.1
AMQP_PORT=5672
MGMT="http://127.0.0.1:15672/api"
MONGO_PORT="${MONGO_PORT:-27017}"
FERRETDB_VERSION="${FERRETDB_VERSION:-v1.24.2}"
GOBIN_DIR="$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
FERRETDB_BIN="${FERRETDB_BIN:-$GOBIN_DIR/ferretdb-$FERRETDB_VERSION}"
FERRETDB_BACKEND="${FERRETDB_BACKEND:-postgresql}"
# No TLS to a PostgreSQL on this machine: pgx's default (`prefer`) encrypts whenever the server
# offers it, as Debian's does, and loopback traffic gains nothing from it (bench:system: 1.5 ms of
# PostgreSQL CPU per booking). A remote server's URL should say `sslmode=verify-full`.
PG_URL="${FERRETDB_POSTGRESQL_URL:-postgres://postgres@127.0.0.1:5432/ferretdb?sslmode=disable}"
PG_DB_URL="$PG_URL"
FERRETDB_PG_POOL="${FERRETDB_PG_POOL:-90}"
# One Go scheduler thread: FerretDB here uses a third of a core at most, and with two each wakeup
# also wakes an idle thread that spins for work and parks again (bench:system: 10-15 % less
# FerretDB CPU per booking with 1, latency no worse).
FERRETDB_GOMAXPROCS="${FERRETDB_GOMAXPROCS:-1}"

say() { printf 'infra: %s\n' "$*"; }
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
wait_for() { # what, seconds, command...
  local what=$1 secs=$2; shift 2
  for ((i = 0; i < secs * 4; i++)); do "$@" && return 0; sleep 0.25; done
  say "ERROR: $what did not come up within ${secs}s"; return 1
}

# --- RabbitMQ -------------------------------------------------------------------------------------
# Whether the broker answers the AMQP protocol header with its Connection.Start (a method frame,
# type 1) within 10 s: a node that accepts TCP but never answers it (seen twice here under heavy
# parallel test load, its management API still answering) hangs every test.
amqp_answers() {
  node -e '
    const s = require("net").connect(Number(process.argv[2]), process.argv[1]);
    setTimeout(() => process.exit(1), 10000);
    s.on("connect", () => s.write(Buffer.from([65, 77, 81, 80, 0, 0, 9, 1])));
    s.on("data", (d) => process.exit(d[0] === 1 ? 0 : 1));
    s.on("error", () => process.exit(1));
    s.on("close", () => process.exit(1));
  ' "$1" "$2"
}
if port_open $AMQP_HOST $AMQP_PORT && ! amqp_answers $AMQP_HOST $AMQP_PORT; then
  say "rabbitmq: $AMQP_HOST:$AMQP_PORT accepts connections but does not answer AMQP: restarting the node"
  pid=$(ss -ltnpH "sport = :$AMQP_PORT" 2>/dev/null | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  timeout 30 rabbitmqctl stop >/dev/null 2>&1 || { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; } || true
  wait_for "the old node to let go of $AMQP_PORT" 30 bash -c "! (exec 3<>/dev/tcp/$AMQP_HOST/$AMQP_PORT) 2>/dev/null"
fi
if port_open $AMQP_HOST $AMQP_PORT; then
  say "rabbitmq: using the broker answering at $AMQP_HOST:$AMQP_PORT"
else
  if ! command -v rabbitmq-server >/dev/null 2>&1; then
    say "rabbitmq: not installed; installing Debian's rabbitmq-server"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq rabbitmq-server >/dev/null
  fi
  if ! port_open $AMQP_HOST $AMQP_PORT; then
    say "rabbitmq: starting (rabbitmq-server -detached)"
    rabbitmq-server -detached >/dev/null 2>&1 || true
  fi
  wait_for "RabbitMQ on $AMQP_PORT" 90 port_open $AMQP_HOST $AMQP_PORT
  wait_for "RabbitMQ answering AMQP" 120 amqp_answers $AMQP_HOST $AMQP_PORT
  say "rabbitmq: started at $AMQP_HOST:$AMQP_PORT"
fi

# The management API (tests create a vhost per test file through it; operators read queues) and the
# consistent-hash exchange (`npm run bench:ordering` measures shard queues with it: docs/adr/0105). Checking the API
# first keeps a second run fast: rabbitmq-plugins is slow.
if curl -sf -u guest:guest "$MGMT/overview" 2>/dev/null | grep -q 'x-consistent-hash'; then
  say "rabbitmq: plugins rabbitmq_management, rabbitmq_consistent_hash_exchange enabled"
else
  say "rabbitmq: enabling plugins rabbitmq_management rabbitmq_consistent_hash_exchange"
  rabbitmq-plugins enable rabbitmq_management rabbitmq_consistent_hash_exchange >/dev/null
  wait_for "RabbitMQ management API" 60 curl -sf -o /dev/null -u guest:guest "$MGMT/overview"
fi

# --- MongoDB-wire server ---------------------------------------------------------------------------
mongo_ping() { # url
  node -e '
    const { MongoClient } = require("mongodb");
    const c = new MongoClient(process.argv[1], { serverSelectionTimeoutMS: 1500 });
    c.connect().then(() => c.db("admin").command({ ping: 1 })).then(() => c.close().then(() => process.exit(0)), () => process.exit(1));
  ' "$1" >/dev/null 2>&1
}

MONGO=""
if [ -n "${MONGO_URL:-}" ]; then
  if mongo_ping "$MONGO_URL"; then
    MONGO="$MONGO_URL"
    say "mongo: using MONGO_URL ($(echo "$MONGO_URL" | sed -E 's#//[^@/]*@#//#'))"
  else
    say "mongo: MONGO_URL is set but does not answer a ping; falling back to a local server"
  fi
fi
LOCAL_URL="mongodb://127.0.0.1:$MONGO_PORT"
if [ -z "$MONGO" ] && port_open 127.0.0.1 "$MONGO_PORT"; then
  if mongo_ping "$LOCAL_URL"; then
    MONGO="$LOCAL_URL"
    say "mongo: using the server answering at 127.0.0.1:$MONGO_PORT"
  else
    say "ERROR: something listens on 127.0.0.1:$MONGO_PORT but does not answer a MongoDB ping"; exit 1
  fi
fi
if [ -z "$MONGO" ] && command -v mongod >/dev/null 2>&1; then
  mkdir -p "$DATA/mongod"
  say "mongo: starting mongod on 127.0.0.1:$MONGO_PORT (data in .data/mongod)"
  mongod --dbpath "$DATA/mongod" --bind_ip 127.0.0.1 --port "$MONGO_PORT" --fork --logpath "$DATA/mongod.log" >/dev/null
  wait_for "mongod" 60 mongo_ping "$LOCAL_URL"
  MONGO="$LOCAL_URL"
fi
if [ -z "$MONGO" ]; then
  if [ ! -x "$FERRETDB_BIN" ] || ! "$FERRETDB_BIN" --version >/dev/null 2>&1; then
    say "mongo: building FerretDB $FERRETDB_VERSION (PostgreSQL and SQLite backends) into $FERRETDB_BIN; this happens once"
    command -v go >/dev/null 2>&1 || { say "ERROR: Go is needed to build FerretDB and is not on PATH"; exit 1; }
    # `go install pkg@version` asks the proxy for the module's version list, which the proxy here
    # refuses; downloading the exact version and building it from the module cache does not need it.
    MODDIR=""
    for v in "$FERRETDB_VERSION" v1.24.0; do
      if MODDIR=$(go mod download -json "github.com/FerretDB/FerretDB@$v" 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);if(j.Error){process.exit(1)}console.log(j.Dir)})'); then
        FERRETDB_VERSION=$v; break
      fi
    done
    [ -n "$MODDIR" ] || { say "ERROR: could not download FerretDB $FERRETDB_VERSION or v1.24.0 from the Go module proxy"; exit 1; }
    # The module archive lacks build/version/version.txt (made by FerretDB's release tooling) and
    # the binary refuses to start without it: build from a writable copy that has it.
    SRC="$(mktemp -d)"
    cp -r "$MODDIR/." "$SRC" && chmod -R u+w "$SRC"
    echo "$FERRETDB_VERSION" >"$SRC/build/version/version.txt"
    mkdir -p "$(dirname "$FERRETDB_BIN")"
    (cd "$SRC" && GOFLAGS=-mod=mod go build -o "$FERRETDB_BIN" ./cmd/ferretdb)
    rm -rf "$SRC"
  fi
  # PostgreSQL: measured here with 50 concurrent writers, the SQLite backend managed ~90 insert+update
  # pairs/s with a p99 of ~4 s, the PostgreSQL backend ~780/s with a p99 of ~170 ms. SQLite remains
  # the fallback on a machine without PostgreSQL.
  if [ "$FERRETDB_BACKEND" = postgresql ] && ! { command -v psql && command -v pg_isready; } >/dev/null 2>&1; then
    FERRETDB_BACKEND=sqlite
  fi
  if [ "$FERRETDB_BACKEND" = postgresql ] && ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
      say "postgresql: starting the local cluster for FerretDB"
      pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start >/dev/null 2>&1 || true
      wait_for "PostgreSQL" 30 pg_isready -q -h 127.0.0.1 -p 5432 || FERRETDB_BACKEND=sqlite
    else
      FERRETDB_BACKEND=sqlite
    fi
  fi
  mkdir -p "$DATA/ferretdb/sqlite" "$DATA/ferretdb/state"
  FERRET_VERSION_TEXT="$("$FERRETDB_BIN" --version 2>/dev/null | sed -n "s/^version: //p")"
  if [ "$FERRETDB_BACKEND" = postgresql ]; then
    PG_DB="${PG_URL##*/}"
    PG_DB="${PG_DB%%\?*}"
    PG_ADMIN_URL="${PG_URL%/*}/postgres"
    if ! psql "$PG_ADMIN_URL" -tAc "select 1 from pg_database where datname = '$PG_DB'" 2>/dev/null | grep -q 1; then
      psql "$PG_ADMIN_URL" -qc "create database \"$PG_DB\"" >/dev/null
    fi
    # FerretDB's pool takes FERRETDB_PG_POOL of PostgreSQL's connections; Debian's default of 100
    # leaves almost none for anything else (psql, a second FerretDB of `npm run bench:system`).
    # Raised before FerretDB connects (a restart of PostgreSQL, which nothing of ours uses yet).
    if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ] &&
      [ "$(psql "$PG_ADMIN_URL" -tAc 'show max_connections')" -lt $((FERRETDB_PG_POOL * 2 + 50)) ]; then
      say "postgresql: max_connections to $((FERRETDB_PG_POOL * 2 + 50)) (restarting the local cluster)"
      psql "$PG_ADMIN_URL" -qc "alter system set max_connections = $((FERRETDB_PG_POOL * 2 + 50))" >/dev/null
      pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main restart >/dev/null 2>&1
      wait_for "PostgreSQL" 30 pg_isready -q -h 127.0.0.1 -p 5432
    fi
    # FerretDB sends parameterised statements (`_jsonb->$1 @> $2`). After five executions PostgreSQL
    # may switch a statement to a generic plan, which cannot use the expression indexes the field
    # name selects, and reads the table by a sequential scan that grows with the data (issue 16).
    # Planning each execution with its values keeps every lookup on its index. Set before FerretDB
    # opens its connections (a database setting applies to new sessions).
    psql "$PG_ADMIN_URL" -qc "alter database \"$PG_DB\" set plan_cache_mode = force_custom_plan" >/dev/null
    say "mongo: starting FerretDB ($FERRET_VERSION_TEXT) on 127.0.0.1:$MONGO_PORT, PostgreSQL backend (database $PG_DB)"
    # FerretDB's own default is 50 PostgreSQL connections. Each open cursor (a find whose result
    # outlasts its first batch) holds one until its last getMore, and DDL (create or drop database,
    # collection or index) holds FerretDB's metadata lock while it waits for one: with all 50 taken,
    # the server stalls for good (seen here with several test runs at once: every client hung, goroutine
    # dump showed 50 busy connections and dropDatabase waiting). More connections make that far rarer.
    case "$PG_URL" in *pool_max_conns=*) ;; *\?*) PG_URL="$PG_URL&pool_max_conns=$FERRETDB_PG_POOL" ;; *) PG_URL="$PG_URL?pool_max_conns=$FERRETDB_PG_POOL" ;; esac
    BACKEND_ARGS=(--handler=postgresql "--postgresql-url=$PG_URL")
  else
    say "mongo: starting FerretDB ($FERRET_VERSION_TEXT) on 127.0.0.1:$MONGO_PORT, SQLite backend (data in .data/ferretdb)"
    BACKEND_ARGS=(--handler=sqlite "--sqlite-url=file:$DATA/ferretdb/sqlite/")
  fi
  GOMAXPROCS="$FERRETDB_GOMAXPROCS" nohup "$FERRETDB_BIN" "${BACKEND_ARGS[@]}" \
    --listen-addr="127.0.0.1:$MONGO_PORT" --state-dir="$DATA/ferretdb/state" \
    --telemetry=disable --debug-addr=- --log-level=warn \
    >"$DATA/ferretdb.log" 2>&1 </dev/null &
  echo $! >"$DATA/ferretdb.pid"
  wait_for "FerretDB (see .data/ferretdb.log)" 60 mongo_ping "$LOCAL_URL"
  MONGO="$LOCAL_URL"
fi

# FerretDB on PostgreSQL: indexes its equality filters can use (scripts/ferretdb-pg-indexes.sql says
# why). Applied on every run, so a FerretDB started before the script had them gets them too.
if [ "$MONGO" = "$LOCAL_URL" ] && command -v psql >/dev/null 2>&1 &&
  psql "$PG_DB_URL" -tAc "select 1" >/dev/null 2>&1; then
  PGOPTIONS="-c client_min_messages=warning" psql "$PG_DB_URL" -qtA -v ON_ERROR_STOP=1 -f "$ROOT/scripts/ferretdb-pg-indexes.sql" >/dev/null
  say "mongo: PostgreSQL indexes for FerretDB's equality filters in place"
fi

# Vhosts and databases of killed test runs, older than TEST_LEFTOVER_MAX_AGE_H (6): gone.
say "$(node "$ROOT/scripts/sweep-test-leftovers.mjs" "$MONGO" "$MGMT")"

AMQP="${AMQP_URL:-amqp://guest:guest@$AMQP_HOST:$AMQP_PORT}"
cat >"$DATA/infra.env" <<EOF
MONGO_URL=$MONGO
AMQP_URL=$AMQP
EOF
say "ready: MONGO_URL=$(echo "$MONGO" | sed -E 's#//[^@/]*@#//#') AMQP_URL=$(echo "$AMQP" | sed -E 's#//[^@/]*@#//#')"
