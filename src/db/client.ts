import postgres from "postgres";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { claimDataDir, runningEngine, wouldCreateDatabase } from "./data-dir-lock.ts";
import { startEmbeddedEngine } from "./embedded.ts";
import { embeddedMaintenance, type MaintenanceJob } from "./maintenance.ts";
import type { DatabaseKind, Listen, Sql } from "./sql.ts";
import {
  DatabaseStartupError,
  describeUrl,
  explainConnectFailure,
  isTransientConnectFailure,
} from "./startup-errors.ts";
import { checkTimescaleServer } from "./timescale-preflight.ts";

export interface Database {
  sql: Sql;
  /** For /ready and log lines only: nothing outside src/db/ behaves differently by engine. */
  kind: DatabaseKind;
  /** Where a second client (CLI, benchmark, test) can reach the same database. */
  url: string;
  /** Scheduled work the engine needs from the service (a TimescaleDB server runs its own policies). */
  maintenance: MaintenanceJob[];
  listen: Listen;
  /**
   * A TimescaleDB server only: one more connection, outside the pool, on which a
   * read may run part of its work beside its own transaction (read-companion.ts).
   */
  readCompanion?: Sql;
  /** Migrations are applied: other processes waiting for this embedded engine may now use it. */
  ready(): void;
  close(): Promise<void>;
}

export type DatabaseSettings = Pick<Config, "DATABASE_URL" | "DATA_DIR" | "DATABASE_POOL_SIZE"> &
  Partial<Pick<Config, "DATABASE_CONNECT_WAIT_SECONDS" | "AGGREGATE_REFRESH_CRON" | "EVENTS_COMPRESSION_CRON">>;

/**
 * How a timestamptz parameter travels. postgres.js's own serializer passes every
 * value through a Date, which holds milliseconds: a time given as text (a stored
 * time read back as text, a test's microseconds) lost its microseconds, and
 * every ingested event's time was parsed once more. Text now goes to PostgreSQL
 * as it is, to be parsed there; the parameter keeps its type, so a time in a
 * statement still leaves out chunks at planning, as a text cast would not.
 */
const timestamptzParameter = {
  to: 1184,
  from: [1184],
  serialize: (value: Date | string | number) =>
    typeof value === "string" ? value : (value instanceof Date ? value : new Date(value)).toISOString(),
  parse: (text: string) => new Date(text),
};

export function connect(url: string, max: number): Sql {
  return postgres(url, {
    types: { timestamptzParameter },
    onnotice: () => {},
    connect_timeout: 5,
    // postgres.js waits (0.5 to 1) × min(3^n / 100, 20) s before a connection's
    // next attempt, n counting the pool's failed connects since its last success:
    // a restart's few seconds of refused connects reached the 20 s ceiling, and
    // a request queued on such a connection waited it out. A second at most.
    backoff: (failures: number) => (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** failures, 1),
    max,
    // JIT compiles statements over many compressed chunks for seconds, whatever they read (sql/070).
    connection: { application_name: "content-telemetry", jit: "off" },
  });
}

const loopbackUrl = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`;

/** postgres.js's own LISTEN: one dedicated connection for all channels, re-listening after a reconnect. */
const listenThrough =
  (sql: Sql): Listen =>
  async (channel, handler, missed) => {
    let listened = false;
    // postgres.js calls this after each LISTEN: the first, then one per reconnect.
    const onListen = () => {
      if (listened) missed?.();
      listened = true;
    };
    const subscription = await sql.listen(channel, handler, onListen);
    return () => subscription.unlisten();
  };

/** Longest a first statement may take before the server is taken for something other than PostgreSQL. */
const firstAnswerSeconds = 15;

/**
 * The first statement, within `firstAnswerSeconds`: postgres.js waits for ever on a
 * port that answers but not as PostgreSQL (an HTTP server reads its start-up
 * message as a bad request, and the client the reply as a message it never finishes).
 */
async function answersAsPostgres(sql: Sql, url: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new DatabaseStartupError(
            `the server at ${describeUrl(url)} accepted the connection but gave no PostgreSQL answer within ${firstAnswerSeconds} s. Is that the database's host and port? Check DATABASE_URL.`,
          ),
        ),
      firstAnswerSeconds * 1000,
    );
  });
  const first = sql`SELECT 1`.execute();
  // Closing the client after a timeout rejects the statement still waiting: nobody awaits it then.
  first.catch(() => {});
  try {
    await Promise.race([first, silence]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Connects to a server, waiting up to `waitSeconds` while it is not up yet (a
 * container starting beside the service), then stops with one line naming the
 * cause: unreachable, credentials refused, no such database, no TimescaleDB.
 */
async function openServer(url: string, poolSize: number, waitSeconds: number, log: Logger): Promise<Sql> {
  const sql = connect(url, poolSize);
  const deadline = Date.now() + waitSeconds * 1000;
  for (let attempt = 0; ; attempt++) {
    try {
      await answersAsPostgres(sql, url);
      break;
    } catch (error) {
      if (isTransientConnectFailure(error) && Date.now() < deadline) {
        if (attempt === 0) log.warn("waiting for the database", { reason: explainConnectFailure(error, url) });
        await Bun.sleep(1000);
        continue;
      }
      await sql.end({ timeout: 1 }).catch(() => {});
      const explained = explainConnectFailure(error, url);
      if (explained) throw new DatabaseStartupError(explained);
      throw error;
    }
  }
  try {
    await checkTimescaleServer(sql, url);
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
  return sql;
}

/**
 * Opens a client to `DATABASE_URL`; without it, to the embedded engine: the one
 * another live process already serves from `DATA_DIR` when `shareRunning` is set
 * (the CLI beside a running service), otherwise one started in this process.
 */
export async function openDatabase(
  settings: DatabaseSettings,
  log: Logger,
  options: { inMemory?: boolean; shareRunning?: boolean } = {},
): Promise<Database> {
  if (settings.DATABASE_URL) {
    const url = settings.DATABASE_URL;
    const sql = await openServer(url, settings.DATABASE_POOL_SIZE, settings.DATABASE_CONNECT_WAIT_SECONDS ?? 0, log);
    log.info("database: TimescaleDB server", { pool_size: settings.DATABASE_POOL_SIZE });
    // Connects at its first use, like the pool.
    const readCompanion = connect(url, 1);
    return {
      sql,
      kind: "server",
      url,
      maintenance: [],
      listen: listenThrough(sql),
      readCompanion,
      ready: () => {},
      close: async () => {
        await Promise.all([sql.end({ timeout: 5 }), readCompanion.end({ timeout: 5 })]);
      },
    };
  }
  const dataDir = options.inMemory ? undefined : settings.DATA_DIR;
  const running = dataDir ? await runningEngine(dataDir) : undefined;
  if (running) {
    if (!options.shareRunning)
      throw new DatabaseStartupError(`DATA_DIR ${dataDir} is in use by the service with pid ${running.pid}`);
    const url = loopbackUrl(running.port);
    const sql = connect(url, 1);
    log.info("database: embedded TimescaleDB served by a running process", { pid: running.pid });
    // The serving process holds the engine and its caches; a client beside it needs no notifications.
    return {
      sql,
      kind: "embedded",
      url,
      maintenance: [],
      listen: listenThrough(sql),
      ready: () => {},
      close: () => sql.end({ timeout: 5 }),
    };
  }
  if (dataDir && wouldCreateDatabase(dataDir)) log.info("creating a new embedded database", { data_dir: dataDir });
  // Claimed before the engine starts, so a CLI started meanwhile waits for this
  // engine instead of opening a second one (data-dir-lock.ts).
  const claim = dataDir ? usableDataDir(dataDir, () => claimDataDir(dataDir)) : undefined;
  let engine: Awaited<ReturnType<typeof startEmbeddedEngine>>;
  try {
    engine = await startEmbeddedEngine(dataDir);
  } catch (error) {
    claim?.release();
    throw error;
  }
  claim?.serving(engine.port);
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
    maintenance: embeddedMaintenance(settings),
    // LISTEN through the pool, so the statement takes its turn on the shared backend like any other.
    async listen(channel, handler) {
      const off = engine.onNotification(channel, handler);
      await sql`LISTEN ${sql(channel)}`;
      return async () => off();
    },
    ready: () => claim?.ready(),
    async close() {
      await sql.end({ timeout: 5 });
      await engine.stop();
      claim?.release();
    },
  };
}

/** Runs `work` on DATA_DIR; a directory the service cannot create or write is the operator's to fix: one line. */
function usableDataDir<T>(dataDir: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    const { code, syscall, path } = error as NodeJS.ErrnoException;
    if (error instanceof DatabaseStartupError || typeof code !== "string") throw error;
    // The path that failed may be DATA_DIR or, for a new one, its lock file beside it.
    throw new DatabaseStartupError(
      `DATA_DIR ${dataDir} cannot be used: ${syscall ?? "access"} ${path ?? dataDir} failed (${code}); the service needs to create and write DATA_DIR and, while it is new, a lock file beside it`,
    );
  }
}
