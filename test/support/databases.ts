import { isAlive } from "../../src/core/process-alive.ts";
import { connect, type Database, openDatabase } from "../../src/db/client.ts";
import { createLogger } from "../../src/log.ts";

/** The server the suite runs against, when TEST_DATABASE_URL names one; undefined on the embedded engine. */
export const testServerUrl = process.env.TEST_DATABASE_URL || undefined;

const prefix = "ct_test_";

function withDatabase(url: string, name: string): string {
  const next = new URL(url);
  next.pathname = `/${name}`;
  return next.toString();
}

/**
 * A new, empty database on the test server, named after this process: dropped by
 * `drop()`, or by the next run if this process dies first.
 */
export async function createServerDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = connect(serverUrl, 1);
  try {
    // Databases of earlier runs that were killed before they could drop theirs.
    const leftovers = await admin<{ datname: string }[]>`
      SELECT datname FROM pg_database WHERE datname LIKE ${`${prefix}%`}`;
    for (const { datname } of leftovers) {
      const pid = Number(datname.slice(prefix.length).split("_")[0]);
      if (pid && !isAlive(pid)) await admin`DROP DATABASE IF EXISTS ${admin(datname)} WITH (FORCE)`;
    }
    const name = `${prefix}${process.pid}_${crypto.randomUUID().slice(0, 8)}`;
    await admin`CREATE DATABASE ${admin(name)}`;
    return {
      url: withDatabase(serverUrl, name),
      async drop() {
        const dropper = connect(serverUrl, 1);
        try {
          await dropper`DROP DATABASE IF EXISTS ${dropper(name)} WITH (FORCE)`;
        } finally {
          await dropper.end({ timeout: 5 });
        }
      },
    };
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** The databases process `pid` made with createServerDatabase and has not dropped. */
export async function serverDatabasesOf(serverUrl: string, pid: number): Promise<string[]> {
  const admin = connect(serverUrl, 1);
  try {
    const rows = await admin<{ datname: string }[]>`
      SELECT datname FROM pg_database WHERE starts_with(datname, ${`${prefix}${pid}_`})`;
    return rows.map((row) => row.datname);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/**
 * An empty database of its own, for tests that apply or break migrations: an
 * in-memory embedded engine, or a new database on the test server. `close()` drops it.
 */
export async function scratchDatabase(): Promise<Database> {
  const log = createLogger("error");
  if (!testServerUrl) {
    return openDatabase({ DATA_DIR: "unused", DATABASE_POOL_SIZE: 1, DATABASE_URL: undefined }, log, {
      inMemory: true,
    });
  }
  const server = await createServerDatabase(testServerUrl);
  const db = await openDatabase({ DATA_DIR: "unused", DATABASE_POOL_SIZE: 2, DATABASE_URL: server.url }, log);
  return {
    ...db,
    async close() {
      await db.close();
      await server.drop();
    },
  };
}
