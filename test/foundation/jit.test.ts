import { expect, test } from "bun:test";
import { join } from "node:path";
import postgres from "postgres";
import { connect } from "../../src/db/client.ts";
import { defaultMigrationsDir, migrate } from "../../src/db/migrate.ts";
import { createLogger } from "../../src/log.ts";
import { createServerDatabase, scratchDatabase, testServerUrl } from "../support/databases.ts";
import { testRuntime } from "../support/runtime.ts";

// JIT compiles a statement over many compressed chunks for seconds, however few
// rows it reads (sql/070): nothing the service runs on its database uses it.

/** jit as a session sees it that sets nothing itself, as TimescaleDB's policy jobs do. */
async function jitOfPlainSession(url: string): Promise<string | undefined> {
  const plain = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await plain<{ jit: string }[]>`SELECT current_setting('jit') AS jit`;
    return row?.jit;
  } finally {
    await plain.end({ timeout: 5 });
  }
}

test.skipIf(testServerUrl !== undefined)(
  "the embedded engine, built for WebAssembly, has no JIT to turn off",
  async () => {
    const { ctx } = await testRuntime();
    const [row] = await ctx.sql<{ available: boolean }[]>`SELECT pg_jit_available() AS available`;
    expect(row?.available).toBe(false);
  },
);

test.skipIf(!testServerUrl)(
  "the service's connections to a server run without JIT, before any migration and whatever the database's default",
  async () => {
    const database = await createServerDatabase(testServerUrl as string);
    const sql = connect(database.url, 1);
    try {
      const [row] = await sql<{ jit: string }[]>`SELECT current_setting('jit') AS jit`;
      expect(row?.jit).toBe("off");
      expect(await jitOfPlainSession(database.url)).toBe("on");
    } finally {
      await sql.end({ timeout: 5 });
      await database.drop();
    }
  },
  30_000,
);

test.skipIf(!testServerUrl)(
  "on a server, the migrations turn JIT off for the database's other sessions, TimescaleDB's policy jobs among them",
  async () => {
    const db = await scratchDatabase();
    try {
      expect(await jitOfPlainSession(db.url)).toBe("on");
      await migrate(db.sql, createLogger("error"));
      expect(await jitOfPlainSession(db.url)).toBe("off");
    } finally {
      await db.close();
    }
  },
  60_000,
);

test.skipIf(!testServerUrl)(
  "a user that does not own the database still applies that migration, and JIT stays as the owner left it",
  async () => {
    const server = testServerUrl as string;
    const database = await createServerDatabase(server);
    const role = `ct_not_owner_${crypto.randomUUID().slice(0, 8)}`;
    const admin = connect(server, 1);
    const asRole = new URL(database.url);
    asRole.username = role;
    const limited = postgres(asRole.toString(), { max: 1, onnotice: () => {} });
    try {
      await admin`CREATE ROLE ${admin(role)} LOGIN`;
      const migration = await Bun.file(join(defaultMigrationsDir, "070_jit_off.sql")).text();
      await limited.unsafe(migration).simple();
      expect(await jitOfPlainSession(database.url)).toBe("on");
    } finally {
      await limited.end({ timeout: 5 });
      await database.drop();
      await admin`DROP ROLE IF EXISTS ${admin(role)}`;
      await admin.end({ timeout: 5 });
    }
  },
  60_000,
);
