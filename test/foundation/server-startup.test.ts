import { describe, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import { isOlderVersion, type ServerFacts, timescaleProblem } from "../../src/db/timescale-preflight.ts";
import { createServerDatabase, testServerUrl } from "../support/databases.ts";
import { runUntilExit, serviceEnv } from "../support/service-process.ts";

/** Starts the service against `url` and expects it to stop at once with one clear log line and no stack trace. */
async function refusedStart(url: string, waitSeconds = "0") {
  const result = await runUntilExit(serviceEnv({ DATABASE_URL: url, DATABASE_CONNECT_WAIT_SECONDS: waitSeconds }));
  expect(result.exitCode).toBe(1);
  const failures = result.lines.filter((line) => line.level === "error");
  expect(failures).toHaveLength(1);
  expect(failures[0]?.stack).toBeUndefined();
  expect(result.stdout + result.stderr).not.toContain("    at ");
  return { message: String(failures[0]?.msg), lines: result.lines };
}

const withDatabase = (url: string, user: string | null, database: string) => {
  const next = new URL(url);
  if (user) next.username = user;
  next.pathname = `/${database}`;
  return next.toString();
};

describe("start-up against a database that cannot hold the service", () => {
  test("an unreachable server stops start-up with one line naming the address and the cause", async () => {
    const { message } = await refusedStart("postgres://svc:secret@127.0.0.1:1/telemetry");
    expect(message).toContain("cannot reach the database at svc@127.0.0.1:1/telemetry: connection refused");
    expect(message).not.toContain("secret");
  }, 30_000);

  test("a server that stays away is waited for, then refused with the same line", async () => {
    const started = performance.now();
    const { message, lines } = await refusedStart("postgres://127.0.0.1:1/telemetry", "2");
    expect(performance.now() - started).toBeGreaterThanOrEqual(2000);
    expect(lines.some((line) => line.msg === "waiting for the database")).toBe(true);
    expect(message).toContain("connection refused");
  }, 30_000);

  test("a port that answers, but not as PostgreSQL, is named once the first answer is overdue", async () => {
    const notPostgres = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("a web server") });
    try {
      const { message } = await refusedStart(`postgres://127.0.0.1:${notPostgres.port}/telemetry`);
      expect(message).toContain(
        `the server at 127.0.0.1:${notPostgres.port}/telemetry accepted the connection but gave no PostgreSQL answer`,
      );
    } finally {
      notPostgres.stop(true);
    }
  }, 60_000);

  test.skipIf(!testServerUrl)(
    "a user that may not create tables (PostgreSQL 15's schema public) is told what to grant",
    async () => {
      const server = testServerUrl as string;
      const role = `ct_reader_${crypto.randomUUID().slice(0, 8)}`;
      const database = await createServerDatabase(server);
      const admin = connect(server, 1);
      const owner = connect(database.url, 1);
      try {
        await admin`CREATE ROLE ${admin(role)} LOGIN`;
        await owner`CREATE EXTENSION IF NOT EXISTS timescaledb`;
        const { message } = await refusedStart(
          withDatabase(database.url, role, new URL(database.url).pathname.slice(1)),
        );
        expect(message).toContain("the database user may not create the service's tables");
        expect(message).toContain("grant the user CREATE on the database and on schema public");
      } finally {
        await owner.end({ timeout: 5 });
        await database.drop();
        await admin`DROP ROLE IF EXISTS ${admin(role)}`;
        await admin.end({ timeout: 5 });
      }
    },
    60_000,
  );

  test.skipIf(!testServerUrl)(
    "an unknown user, a missing database and a user without rights are named",
    async () => {
      const server = testServerUrl as string;
      expect((await refusedStart(withDatabase(server, "no_such_role", "postgres"))).message).toContain(
        "refused this user",
      );
      expect((await refusedStart(withDatabase(server, null, "no_such_database"))).message).toContain(
        'the database "no_such_database" does not exist',
      );

      // A fresh database whose user may connect but not create the extension.
      const role = `ct_limited_${crypto.randomUUID().slice(0, 8)}`;
      const database = await createServerDatabase(server);
      const admin = connect(server, 1);
      try {
        await admin`CREATE ROLE ${admin(role)} LOGIN`;
        const { message } = await refusedStart(
          withDatabase(database.url, role, new URL(database.url).pathname.slice(1)),
        );
        expect(message).toContain(`user "${role}" may not create the timescaledb extension`);
        expect(message).toContain("CREATE EXTENSION timescaledb");
      } finally {
        await database.drop();
        await admin`DROP ROLE IF EXISTS ${admin(role)}`;
        await admin.end({ timeout: 5 });
      }
    },
    60_000,
  );
});

describe("what the start-up check says about a server", () => {
  const healthy: ServerFacts = {
    postgresVersionNum: 150018,
    postgresVersion: "15.18",
    sharedPreloadLibraries: "timescaledb",
    availableVersion: "2.28.3",
    createdVersion: null,
    mayCreateExtension: true,
    database: "telemetry",
    user: "svc",
  };
  const problem = (facts: Partial<ServerFacts>) => timescaleProblem({ ...healthy, ...facts }, "db:5432/telemetry");

  test("a tested server passes, with the extension created or still to create", () => {
    expect(problem({})).toBeUndefined();
    expect(problem({ createdVersion: "2.28.3", mayCreateExtension: false })).toBeUndefined();
    expect(problem({ sharedPreloadLibraries: 'pg_stat_statements, "timescaledb"' })).toBeUndefined();
  });

  test("each way a server falls short gets its own instruction", () => {
    expect(problem({ availableVersion: null })).toContain("TimescaleDB is not installed");
    expect(problem({ sharedPreloadLibraries: "pg_stat_statements" })).toContain(
      "add timescaledb to shared_preload_libraries",
    );
    expect(problem({ availableVersion: "2.13.1" })).toContain("offers TimescaleDB 2.13.1; the service needs 2.23.0");
    expect(problem({ createdVersion: "2.14.0" })).toContain("ALTER EXTENSION timescaledb UPDATE");
    expect(problem({ mayCreateExtension: false })).toContain('user "svc" may not create the timescaledb extension');
    expect(problem({ postgresVersionNum: 140011, postgresVersion: "14.11" })).toContain("PostgreSQL 14.11");
  });

  test("versions compare by their numeric parts, development builds included", () => {
    expect(isOlderVersion("2.23.0-dev", "2.23.0")).toBe(false);
    expect(isOlderVersion("2.9.3", "2.23.0")).toBe(true);
    expect(isOlderVersion("2.28.3", "2.23.0")).toBe(false);
    expect(isOlderVersion("3.0", "2.23.0")).toBe(false);
  });
});
