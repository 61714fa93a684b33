import { afterAll, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import type { Sql } from "../../src/db/sql.ts";
import { isDatabaseUnavailable } from "../../src/db/unavailable.ts";
import { createServerDatabase } from "../support/databases.ts";
import { callApp, overHttp } from "../support/http.ts";
import { rejectionOf } from "../support/rejection.ts";
import { testRuntime } from "../support/runtime.ts";
import { cliJson, type ServiceProcess, serviceEnv, startService } from "../support/service-process.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

/**
 * The server ends one backend in the middle of a transaction (pg_terminate_backend,
 * an idle-in-transaction timeout, a pooler or failover dropping one connection).
 * Unpatched, postgres.js 3.4.9 wrote the transaction's ROLLBACK to the closed
 * socket, an exception no caller can catch, and kept those bytes in front of the
 * connection's next start-up, so every later statement on it timed out
 * connecting (patches/README.md). PGlite has one backend and nothing to end.
 */
const onServer = Boolean(process.env.TEST_DATABASE_URL);
let service: ServiceProcess | undefined;
afterAll(() => service?.stop("SIGKILL"));

/** Ends the first client backend waiting on a lock, once one is: the statement held up by `holdAgainstWrites`. */
async function endBackendWaitingOnLock(watcher: Sql): Promise<void> {
  for (;;) {
    const ended = await watcher`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND backend_type = 'client backend'
      LIMIT 1`;
    if (ended.length > 0) return;
    await Bun.sleep(20);
  }
}

/** Holds `table` against writes, in a transaction of `holder`, until the returned function is called. */
async function holdAgainstWrites(holder: Sql, table: string): Promise<() => Promise<void>> {
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  const { promise: locked, resolve: lockTaken } = Promise.withResolvers<void>();
  const holding = holder.begin(async (tx) => {
    await tx`LOCK TABLE ${tx(table)} IN SHARE MODE`;
    lockTaken();
    await released;
  });
  await locked;
  return async () => {
    release();
    await holding;
  };
}

/** The pool (of one connection) answers again, each statement at once rather than after a connect timeout. */
async function expectServing(sql: Sql): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const [row] = await sql<{ ok: number }[]>`SELECT 1 AS ok`;
    expect(row?.ok).toBe(1);
  }
}

/** A pool of one connection for the server to end, and a second client to watch and end it from. */
async function withPoolAndWatcher(work: (sql: Sql, watcher: Sql) => Promise<void>): Promise<void> {
  const { db } = await testRuntime();
  const sql = connect(db.url, 1);
  const watcher = connect(db.url, 2);
  try {
    await work(sql, watcher);
  } finally {
    await sql.end({ timeout: 5 });
    await watcher.end({ timeout: 5 });
  }
}

test.skipIf(!onServer)(
  "a transaction whose backend the server ends fails as unavailable, runs nothing after it, and its pool goes on",
  () =>
    withPoolAndWatcher(async (sql, watcher) => {
      const table = `ended_${crypto.randomUUID().replaceAll("-", "")}`;
      await watcher`CREATE TABLE ${watcher(table)} (id int)`;
      const release = await holdAgainstWrites(watcher, table);
      const failing = rejectionOf(
        sql.begin(async (tx) => {
          // Waits on the lock until its backend is ended; what follows must never run.
          await tx`INSERT INTO ${tx(table)} VALUES (1)`.catch(() => {});
          await tx`INSERT INTO ${tx(table)} VALUES (2)`;
        }),
      );
      await endBackendWaitingOnLock(watcher);
      await release();
      expect(isDatabaseUnavailable(await failing)).toBe(true);
      await expectServing(sql);
      await sql.begin((tx) => tx`INSERT INTO ${tx(table)} VALUES (3)`);
      const stored = await watcher<{ id: number }[]>`SELECT id FROM ${watcher(table)} ORDER BY id`;
      expect(stored.map((row) => row.id)).toEqual([3]);
      await watcher`DROP TABLE ${watcher(table)}`;
    }),
  30_000,
);

test.skipIf(!onServer)(
  "a reserved connection the server ends fails every statement sent or queued as unavailable, and its release leaves the pool whole",
  () =>
    withPoolAndWatcher(async (sql, watcher) => {
      const reserved = await sql.reserve();
      const [own] = await reserved<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      // Statements sent together: those after the first wait in the reserved connection's own queue.
      const together = [
        reserved`SELECT pg_sleep(5), ${1}::int`,
        reserved`SELECT ${"queued"}::text`,
        reserved`SELECT ${3}::bigint`,
      ].map(rejectionOf);
      await watcher`SELECT pg_terminate_backend(${own?.pid ?? 0}::int)`;
      for (const error of await Promise.all(together)) expect(isDatabaseUnavailable(error)).toBe(true);
      expect(isDatabaseUnavailable(await rejectionOf(reserved`SELECT 1`))).toBe(true);
      reserved.release();
      await expectServing(sql);
    }),
  30_000,
);

test.skipIf(!onServer)(
  "an ingest whose transaction the server ends is answered 503, and the service's one connection serves the next",
  async () => {
    const { db } = await testRuntime();
    const env = serviceEnv({
      DATABASE_URL: db.url,
      DATABASE_POOL_SIZE: "1",
      RATE_LIMIT_INGEST_PER_SECOND: "0",
      WEBHOOK_SECRET_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64"),
    });
    service = await startService({ ...env, LOG_LEVEL: "info" });
    const org = await cliJson(env, "org", "create", "--name", "Ended backend", "--type", "agent");
    const { key } = await cliJson(env, "key", "create", "--org", org.id, "--scopes", "telemetry:write");
    const remote = overHttp(service.base, 30_000);
    const send = () =>
      callApp(remote, "POST", "/events", {
        key,
        body: batch([validEvents.retrieved(`ended-${crypto.randomUUID().slice(0, 6)}.example.net`)], {
          session_id: crypto.randomUUID(),
        }),
      });
    // The key is looked up (and cached) first, so the ingest's one connection is the one ended.
    expect((await send()).status).toBe(200);

    const watcher = connect(db.url, 2);
    try {
      const release = await holdAgainstWrites(watcher, "events");
      const ended = send();
      await endBackendWaitingOnLock(watcher);
      await release();
      const answer = await ended;
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBeTruthy();
      for (let i = 0; i < 5; i++) expect((await send()).status).toBe(200);
    } finally {
      await watcher.end({ timeout: 5 });
    }
    expect(service.proc.exitCode).toBeNull();
    const failures = service.logs.filter((line) => line.level === "error");
    expect(failures).toEqual([]);
  },
  60_000,
);

test.skipIf(!onServer)("a database closed to new connections is unavailable for the moment, not an error", async () => {
  const scratch = await createServerDatabase(process.env.TEST_DATABASE_URL as string);
  const admin = connect(process.env.TEST_DATABASE_URL as string, 1);
  const closed = connect(scratch.url, 1);
  try {
    const name = new URL(scratch.url).pathname.slice(1);
    await admin`ALTER DATABASE ${admin(name)} ALLOW_CONNECTIONS false`;
    const refused = await rejectionOf(closed`SELECT 1`);
    expect(isDatabaseUnavailable(refused)).toBe(true);
    await admin`ALTER DATABASE ${admin(name)} ALLOW_CONNECTIONS true`;
    expect([...(await closed`SELECT 1 AS one`)]).toEqual([{ one: 1 }]);
  } finally {
    await closed.end();
    await admin.end();
    await scratch.drop();
  }
});
