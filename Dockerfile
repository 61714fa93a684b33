# One container an operator can run alone: TimescaleDB + Bun + the service, as the
# non-root postgres user. With DATABASE_URL set, the bundled database is not
# started and that server is used instead (compose.yaml runs them apart).

# 1. Install the exact locked production dependencies with the pinned Bun.
FROM oven/bun:1.4.5-alpine AS deps
WORKDIR /app
COPY package.json bun.lock bunfig.toml ./
COPY patches ./patches
RUN bun install --frozen-lockfile --production

# 2. The official TimescaleDB image, pinned to the TimescaleDB and PostgreSQL
#    major version the service is tested on (2.28.3, PostgreSQL 15), so its
#    initialisation scripts, extension and data volume layout are used unchanged.
FROM timescale/timescaledb:2.28.3-pg15
# Bun's musl build runs on Alpine; it needs the C++ runtime libraries.
RUN apk add --no-cache libstdc++ libgcc
COPY --from=deps /usr/local/bin/bun /usr/local/bin/bun
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY package.json bun.lock bunfig.toml tsconfig.json ./
COPY src ./src
COPY web ./web
COPY sql ./sql
COPY docker/entrypoint.sh /usr/local/bin/service-entrypoint.sh

# The allocator's settings of package.json's start script: the service runs as
# `bun run start` runs it (README, "Memory and the allocator").
ENV MIMALLOC_PURGE_HOLES=0
# The bundled database listens on loopback only and trusts local connections;
# nothing outside the container can reach it. On docker stop the service drains
# for at most 5 s and closes its connections in at most 5 more, then the database
# stops fast and clean: run with --stop-timeout 30 (Docker's default is 10 s).
ENV POSTGRES_HOST_AUTH_METHOD=trust \
    PORT=3000 \
    HOST=0.0.0.0 \
    SHUTDOWN_GRACE_SECONDS=5 \
    BUN_RUNTIME_TRANSPILER_CACHE_PATH=0
USER postgres
VOLUME /var/lib/postgresql/data
EXPOSE 3000
STOPSIGNAL SIGTERM
# Readiness includes the database.
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s CMD wget -qO- "http://127.0.0.1:${PORT}/ready" >/dev/null || exit 1
ENTRYPOINT ["/usr/local/bin/service-entrypoint.sh"]
