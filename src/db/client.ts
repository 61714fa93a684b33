import postgres from "postgres";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { claimDataDir, runningEngine } from "./data-dir-lock.ts";
import { startEmbeddedEngine } from "./embedded.ts";

export type Sql = postgres.Sql;
/** A pool or an open transaction: what a function takes when it may run inside `sql.begin`. */
export type Queryable = postgres.Sql | postgres.TransactionSql;
export type DatabaseKind = "embedded" | "server";

export interface Database {
  sql: Sql;
  kind: DatabaseKind;
  /** Where a second client (CLI, benchmark, test) can reach the same database. */
  url: string;
  close(): Promise<void>;
}

export function connect(url: string, max: number): Sql {
  return postgres(url, {
    onnotice: () => {},
    connect_timeout: 5,
    max,
    connection: { application_name: "content-telemetry" },
  });
}

const loopbackUrl = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`;

/**
 * Opens a client to `DATABASE_URL`; without it, to the embedded engine: the one
 * another live process already serves from `DATA_DIR` when `shareRunning` is set
 * (the CLI beside a running service), otherwise one started in this process.
 */
export async function openDatabase(
  config: Pick<Config, "DATABASE_URL" | "DATA_DIR" | "DATABASE_POOL_SIZE">,
  log: Logger,
  options: { inMemory?: boolean; shareRunning?: boolean } = {},
): Promise<Database> {
  if (config.DATABASE_URL) {
    const sql = connect(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
    log.info("database: TimescaleDB server", { pool_size: config.DATABASE_POOL_SIZE });
    return { sql, kind: "server", url: config.DATABASE_URL, close: () => sql.end({ timeout: 5 }) };
  }
  const dataDir = options.inMemory ? undefined : config.DATA_DIR;
  const running = dataDir ? runningEngine(dataDir) : undefined;
  if (running) {
    if (!options.shareRunning) throw new Error(`DATA_DIR ${dataDir} is in use by the service with pid ${running.pid}`);
    const url = loopbackUrl(running.port);
    const sql = connect(url, 1);
    log.info("database: embedded TimescaleDB served by a running process", { pid: running.pid });
    return { sql, kind: "embedded", url, close: () => sql.end({ timeout: 5 }) };
  }
  const engine = await startEmbeddedEngine(dataDir);
  const release = dataDir ? claimDataDir(dataDir, engine.port) : () => {};
  const url = loopbackUrl(engine.port);
  // The embedded engine is one backend that runs one statement at a time, and other
  // connections wait while one holds a transaction open: a second connection from
  // this pool could deadlock waiting on a transaction of the first (patches/README.md).
  const sql = connect(url, 1);
  log.info("database: embedded TimescaleDB (PGlite, for development, tests and small single-container installs)", {
    data_dir: dataDir ?? "memory",
    port: engine.port,
  });
  return {
    sql,
    kind: "embedded",
    url,
    async close() {
      await sql.end({ timeout: 5 });
      await engine.stop();
      release();
    },
  };
}
