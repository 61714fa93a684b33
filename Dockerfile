# One container an operator can run alone: TimescaleDB (PostgreSQL 17) + Bun + the service.
# With DATABASE_URL set, the bundled database is not started and that server is used instead.

# 1. Install the exact locked production dependencies with the pinned Bun.
FROM oven/bun:1.4.5-alpine AS deps
WORKDIR /app
COPY package.json bun.lock bunfig.toml ./
RUN bun install --frozen-lockfile --production

# 2. The official TimescaleDB image (Alpine, PostgreSQL 17) is the base, so its
#    initialisation scripts, extension and data volume layout are used unchanged.
FROM timescale/timescaledb:latest-pg17
# Bun's musl build runs on Alpine; it needs the C++ runtime libraries.
RUN apk add --no-cache libstdc++ libgcc
COPY --from=deps /usr/local/bin/bun /usr/local/bin/bun
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json bun.lock bunfig.toml tsconfig.json ./
COPY src ./src
COPY sql ./sql
COPY docker/entrypoint.sh /usr/local/bin/service-entrypoint.sh

# The bundled database listens on loopback only and trusts local connections;
# nothing outside the container can reach it.
ENV POSTGRES_HOST_AUTH_METHOD=trust \
    PORT=3000 \
    HOST=0.0.0.0
VOLUME /var/lib/postgresql/data
EXPOSE 3000
# Readiness includes the database; orchestrators can use it as the health check.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s CMD wget -qO- http://127.0.0.1:3000/ready || exit 1
ENTRYPOINT ["/usr/local/bin/service-entrypoint.sh"]
