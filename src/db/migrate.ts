import { readdir } from "node:fs/promises";
import { join } from "node:path";
import postgres from "postgres";
import type { Logger } from "../log.ts";
import type { Sql } from "./sql.ts";
import { DatabaseStartupError, explainMigrationFailure } from "./startup-errors.ts";

export const defaultMigrationsDir = join(import.meta.dir, "../../sql");

const migrationFile = /^\d{3}_[a-z0-9_]+\.sql$/;
// Arbitrary constant shared by every instance: one migration runs at a time across them.
const migrationLockKey = 7_260_331_001;

/**
 * A migration that drops or alters a continuous aggregate can meet TimescaleDB's
 * scheduler running that aggregate's policy job (on a fresh database the jobs of
 * earlier migrations start at once): PostgreSQL then fails the migration with a
 * deadlock or "tuple concurrently deleted/updated". Each migration is one
 * transaction, rolled back whole, so it is simply tried again.
 */
const maxAttempts = 5;
function raceWithJob(error: unknown): boolean {
  if (!(error instanceof postgres.PostgresError)) return false;
  return error.code === "40P01" || /tuple concurrently (deleted|updated)/.test(error.message);
}

export class MigrationError extends DatabaseStartupError {
  override name = "MigrationError";
}

interface Migration {
  name: string;
  checksum: string;
  content: string;
}

async function readMigrations(dir: string): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((name) => migrationFile.test(name)).sort();
  return Promise.all(
    names.map(async (name) => {
      const content = await Bun.file(join(dir, name)).text();
      const checksum = new Bun.CryptoHasher("sha256").update(content).digest("hex");
      return { name, checksum, content };
    }),
  );
}

/**
 * Applies `sql/NNN_name.sql` files in order, each in its own transaction. Applied
 * files are recorded with a checksum; a changed applied file is refused rather than
 * silently diverging. Returns the names applied.
 *
 * Instances starting together take turns through a transaction's advisory lock,
 * each migration checked again under it, rather than one session lock over them
 * all: a session lock needs a reserved connection, and an unlock sent after the
 * last COMMIT, on a connection the server may have ended by then.
 */
export async function migrate(
  sql: Sql,
  log: Logger,
  dir = defaultMigrationsDir,
  onApplying?: ApplyingMigration,
): Promise<string[]> {
  try {
    return await migrateUnexplained(sql, log, dir, onApplying);
  } catch (error) {
    const explained = explainMigrationFailure(error);
    throw explained ? new DatabaseStartupError(explained) : error;
  }
}

/** Told of each pending migration as it starts (`n` of `total`): a progress line's. */
export type ApplyingMigration = (name: string, n: number, total: number) => void;

async function migrateUnexplained(
  sql: Sql,
  log: Logger,
  dir: string,
  onApplying: ApplyingMigration | undefined,
): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const applied = await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${migrationLockKey})`;
    await tx`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        name text PRIMARY KEY,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`;
    return tx<Recorded[]>`SELECT name, checksum FROM schema_migrations`;
  });
  const recordedAtStart = new Map(applied.map((row) => [row.name, row.checksum]));
  for (const migration of migrations) {
    const recorded = recordedAtStart.get(migration.name);
    if (recorded !== undefined) refuseIfChanged(migration, recorded);
  }
  const pending = migrations.filter((migration) => !recordedAtStart.has(migration.name));
  if (pending.length === 0) return [];
  // A new database's migrations take about half a minute on the embedded engine: say so before the first.
  log.info("applying migrations", { pending: pending.length });
  const scheduler = new PausedScheduler(sql, log);
  const done: string[] = [];
  try {
    for (const [index, migration] of pending.entries()) {
      onApplying?.(migration.name, index + 1, pending.length);
      await scheduler.pause();
      if (await applyUnlessRecorded(sql, log, migration)) {
        log.info("migration applied", { migration: migration.name });
        done.push(migration.name);
      }
    }
  } finally {
    await scheduler.resume();
  }
  return done;
}

/**
 * TimescaleDB's job scheduler for this database, stopped while migrations run and
 * started again after. A migration that drops or alters a continuous aggregate
 * while its policy job runs fails and is tried again (raceWithJob), but the job
 * it cancels has also crashed the whole server: a refresh policy worker of
 * TimescaleDB 2.28.3 ended on signal 11, and PostgreSQL restarted every backend
 * (seen in CI, on a fresh database, whose earlier migrations' jobs start at once).
 * Stopping takes a superuser, and the embedded engine runs no scheduler: without
 * either, migrations run beside the jobs as before.
 */
class PausedScheduler {
  #paused = false;
  #unavailable = false;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
  ) {}

  /** Stops the scheduler once the extension exists (000 creates it); a no-op after that. */
  async pause(): Promise<void> {
    if (this.#paused || this.#unavailable) return;
    try {
      // Named only once it exists: a call is resolved when parsed, before any test in the statement.
      const [found] = await this.sql<{ present: boolean }[]>`
        SELECT to_regproc('_timescaledb_functions.stop_background_workers') IS NOT NULL AS present`;
      if (!found?.present) return;
      const [row] = await this.sql<{ stopped: boolean }[]>`
        SELECT _timescaledb_functions.stop_background_workers() AS stopped`;
      // The embedded engine answers false: it has no scheduler to stop, then or later.
      this.#paused = row?.stopped === true;
      this.#unavailable = !this.#paused;
    } catch (error) {
      this.#unavailable = true;
      this.log.debug("migrations run beside TimescaleDB's jobs", { reason: (error as Error).message });
    }
  }

  async resume(): Promise<void> {
    if (!this.#paused) return;
    try {
      await this.sql`SELECT _timescaledb_functions.start_background_workers()`;
    } catch (error) {
      this.log.warn(
        "could not start TimescaleDB's job scheduler again after the migrations: its jobs wait until SELECT _timescaledb_functions.start_background_workers() is run or the server restarts",
        { error: (error as Error).message },
      );
    }
  }
}

interface Recorded {
  name: string;
  checksum: string;
}

/**
 * Checksums of earlier versions of migrations that were edited after release in
 * their comments only (the SQL is the same, line for line). An installation that
 * applied an earlier version recorded its checksum, and without these its upgrade
 * stopped at start-up ("070_jit_off.sql was changed after it was applied") although
 * its schema is what the file makes today. Each is the SHA-256 of the file as the
 * named commit held it. Edits that change the SQL are never listed here: they need
 * a new migration.
 */
const commentOnlyEarlierChecksums: ReadonlyMap<string, readonly string[]> = new Map([
  // c560a39; the figures in its comment restated in 0f10ba6.
  ["060_owner_timeseries_rollups.sql", ["1ed96c9d7c7f4d6c67d433910ac6c16199f3e3b7944ba204834fc51e709c3c47"]],
  // 92a8896; the measurement in its comment restated in 2d380cd.
  ["070_jit_off.sql", ["141589633a2ab71d2a0ebc12b0d9d16d9ca848fdf1670262543a456b31d8dcb4"]],
  // a0a79c7; the figures in its comment restated in c933596.
  ["071_reporter_rollups.sql", ["d018e911ddb03ed8d8c4b2e6f85945472cefab4dd026188358487f8f5bf10283"]],
]);

function refuseIfChanged(migration: Migration, recorded: string): void {
  if (recorded === migration.checksum) return;
  if (commentOnlyEarlierChecksums.get(migration.name)?.includes(recorded)) return;
  throw new MigrationError(
    `migration ${migration.name} was changed after it was applied (recorded checksum ${recorded.slice(0, 12)}, file ${migration.checksum.slice(0, 12)}); add a new migration instead`,
  );
}

/** Applies one migration, unless another instance has meanwhile; true when this one did. */
async function applyUnlessRecorded(sql: Sql, log: Logger, migration: Migration): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${migrationLockKey})`;
        const [recorded] = await tx<
          Recorded[]
        >`SELECT name, checksum FROM schema_migrations WHERE name = ${migration.name}`;
        if (recorded) {
          refuseIfChanged(migration, recorded.checksum);
          return false;
        }
        await tx.unsafe(migration.content).simple();
        await tx`INSERT INTO schema_migrations (name, checksum) VALUES (${migration.name}, ${migration.checksum})`;
        return true;
      });
    } catch (error) {
      if (error instanceof MigrationError) throw error;
      if (attempt < maxAttempts && raceWithJob(error)) {
        log.warn("migration met a running TimescaleDB job; trying it again", {
          migration: migration.name,
          attempt,
          error: (error as Error).message,
        });
        await Bun.sleep(250 * attempt);
        continue;
      }
      throw new MigrationError(`migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
    }
  }
}
