#!/bin/sh
# Starts the bundled TimescaleDB (unless DATABASE_URL points elsewhere), waits
# until it accepts connections, then runs the service. SIGTERM (docker stop)
# stops the service first, which drains in-flight requests, then the database
# with a fast, clean shutdown (a checkpoint; nothing acknowledged is lost).
# Runs as the image's non-root postgres user.
set -eu

app_dir=${APP_DIR:-/app}
db_port=${PGPORT:-5432}

if [ -n "${DATABASE_URL:-}" ]; then
  exec bun "$app_dir/src/main.ts"
fi

# The image's own entrypoint initialises the data volume on first start (creating
# the timescaledb extension), then runs postgres; listen on loopback only.
docker-entrypoint.sh postgres -c listen_addresses=127.0.0.1 -c port="$db_port" &
db_pid=$!

service_pid=
stopping=0
stop() {
  stopping=1
  if [ -n "$service_pid" ]; then
    kill -TERM "$service_pid" 2>/dev/null || true
    wait "$service_pid" 2>/dev/null || true
  fi
  pg_ctl stop -D "$PGDATA" -m fast -w >/dev/null 2>&1 || kill -TERM "$db_pid" 2>/dev/null || true
  wait "$db_pid" 2>/dev/null || true
}
trap 'stop; exit 0' TERM INT

until pg_isready -h 127.0.0.1 -p "$db_port" -U postgres -q; do
  if ! kill -0 "$db_pid" 2>/dev/null; then
    echo "the bundled database failed to start" >&2
    exit 1
  fi
  sleep 1
done

export DATABASE_URL="postgres://postgres@127.0.0.1:$db_port/postgres"
bun "$app_dir/src/main.ts" &
service_pid=$!

# If the service exits on its own, stop the database and exit with the service's status.
status=0
wait "$service_pid" || status=$?
[ "$stopping" = 1 ] && exit 0
service_pid=
stop
exit "$status"
