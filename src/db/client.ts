import postgres from "postgres";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { type EmbeddedEngine, startEmbeddedEngine } from "./embedded.ts";

export type Sql = postgres.Sql;
/** A client or an open transaction: what service functions that may run inside a transaction take. */
export type Queryable = postgres.ISql;
export type DatabaseKind = "embedded" | "server";

export interface Database {
  sql: Sql;
  kind: DatabaseKind;
  close(): Promise<void>;
}

const clientOptions = {
  onnotice: () => {},
  connect_timeout: 5,
  connection: { application_name: "content-telemetry" },
} as const;

/** Opens a client to `DATABASE_URL`, or starts the embedded engine when it is unset. */
export async function openDatabase(
  config: Pick<Config, "DATABASE_URL" | "DATA_DIR" | "DATABASE_POOL_SIZE">,
  log: Logger,
  options: { inMemory?: boolean } = {},
): Promise<Database> {
  if (config.DATABASE_URL) {
    const sql = postgres(config.DATABASE_URL, { ...clientOptions, max: config.DATABASE_POOL_SIZE });
    log.info("database: TimescaleDB server", { pool_size: config.DATABASE_POOL_SIZE });
    return { sql, kind: "server", close: () => sql.end({ timeout: 5 }) };
  }
  const dataDir = options.inMemory ? undefined : config.DATA_DIR;
  const engine: EmbeddedEngine = await startEmbeddedEngine(dataDir);
  // The embedded engine executes one statement at a time; one connection avoids
  // interleaving transactions of different clients inside the engine.
  const sql = postgres({
    ...clientOptions,
    host: engine.host,
    port: engine.port,
    user: "postgres",
    database: "postgres",
    max: 1,
  });
  log.info("database: embedded TimescaleDB (PGlite, for development, tests and small single-container installs)", {
    data_dir: dataDir ?? "memory",
    port: engine.port,
  });
  return {
    sql,
    kind: "embedded",
    async close() {
      await sql.end({ timeout: 5 });
      await engine.stop();
    },
  };
}
