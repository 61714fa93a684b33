#!/bin/sh
# Starts the bundled TimescaleDB (unless DATABASE_URL points elsewhere), waits
# until it accepts connections, then runs the service; SIGTERM stops the service
# first (it drains in-flight requests) and then the database.
set -eu

if [ -n "${DATABASE_URL:-}" ]; then
  exec bun /app/src/main.ts
fi

# The image's own entrypoint initialises the data volume on first start, then
# runs postgres as the postgres user; listen on loopback only.
docker-entrypoint.sh postgres -c listen_addresses=127.0.0.1 &
db_pid=$!

until pg_isready -h 127.0.0.1 -p 5432 -U postgres -q; do
  if ! kill -0 "$db_pid" 2>/dev/null; then
    echo "the bundled database failed to start" >&2
    exit 1
  fi
  sleep 1
done

export DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres"
bun /app/src/main.ts &
service_pid=$!

stop() {
  kill -TERM "$service_pid" 2>/dev/null || true
  wait "$service_pid" 2>/dev/null || true
  su-exec postgres pg_ctl stop -D "$PGDATA" -m fast 2>/dev/null || kill -TERM "$db_pid" 2>/dev/null || true
  wait "$db_pid" 2>/dev/null || true
}
trap stop TERM INT

# If either process exits on its own, stop the other and exit with its status.
status=0
wait "$service_pid" || status=$?
stop
exit "$status"
