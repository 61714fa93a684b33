import type { Sql } from "./sql.ts";
import { DatabaseStartupError, describeUrl } from "./startup-errors.ts";

/**
 * The oldest TimescaleDB and PostgreSQL the service runs on: the embedded build is
 * TimescaleDB 2.23 on PostgreSQL 17, the server it is tested on 2.28.3 on 15.18.
 */
export const minimumTimescaleVersion = "2.23.0";
export const minimumPostgresVersionNum = 150_000;

/** What a server says about itself before the first migration. */
export interface ServerFacts {
  /** server_version_num, e.g. 150018. */
  postgresVersionNum: number;
  postgresVersion: string;
  /** null when the user may not read it (only superusers and pg_read_all_settings may). */
  sharedPreloadLibraries: string | null;
  /** default_version of timescaledb in pg_available_extensions; null when it is not installed. */
  availableVersion: string | null;
  /** extversion in pg_extension; null when the extension is not created in this database. */
  createdVersion: string | null;
  /** Whether the user may run CREATE EXTENSION timescaledb (a trusted extension): superuser or CREATE on the database. */
  mayCreateExtension: boolean;
  database: string;
  user: string;
}

/** Numeric parts of a version such as "2.28.3" or "2.23.0-dev"; missing parts are 0. */
function versionParts(version: string): number[] {
  return (/^(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version)?.slice(1) ?? []).map((part) => Number(part ?? 0));
}

export function isOlderVersion(version: string, than: string): boolean {
  const a = versionParts(version);
  const b = versionParts(than);
  for (let i = 0; i < 3; i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return diff < 0;
  }
  return false;
}

/** One line saying what keeps the server from running the service, and what to do; undefined when nothing does. */
export function timescaleProblem(facts: ServerFacts, where: string): string | undefined {
  if (facts.postgresVersionNum < minimumPostgresVersionNum) {
    return `the database at ${where} runs PostgreSQL ${facts.postgresVersion}; the service needs PostgreSQL 15 or later with TimescaleDB ${minimumTimescaleVersion} or later.`;
  }
  if (facts.createdVersion !== null) {
    if (isOlderVersion(facts.createdVersion, minimumTimescaleVersion)) {
      return `database "${facts.database}" on ${where} has TimescaleDB ${facts.createdVersion}; the service needs ${minimumTimescaleVersion} or later. Install a newer TimescaleDB on the server, then run ALTER EXTENSION timescaledb UPDATE in that database as its owner.`;
    }
    return undefined;
  }
  if (facts.availableVersion === null) {
    return `TimescaleDB is not installed on the PostgreSQL server at ${where}. Install TimescaleDB ${minimumTimescaleVersion} or later there (or point DATABASE_URL at a TimescaleDB server).`;
  }
  const preloaded = facts.sharedPreloadLibraries
    ?.split(",")
    .map((name) => name.trim().replace(/^"|"$/g, ""))
    .includes("timescaledb");
  if (preloaded === false) {
    return `TimescaleDB is installed on ${where} but not loaded: add timescaledb to shared_preload_libraries in postgresql.conf (now "${facts.sharedPreloadLibraries}") and restart the server.`;
  }
  if (isOlderVersion(facts.availableVersion, minimumTimescaleVersion)) {
    return `the server at ${where} offers TimescaleDB ${facts.availableVersion}; the service needs ${minimumTimescaleVersion} or later. Upgrade TimescaleDB on the server.`;
  }
  if (!facts.mayCreateExtension) {
    return `user "${facts.user}" may not create the timescaledb extension in database "${facts.database}" on ${where}. Run CREATE EXTENSION timescaledb there once as a superuser or the database owner, or grant the user CREATE on the database.`;
  }
  return undefined;
}

export async function serverFacts(sql: Sql): Promise<ServerFacts> {
  const [row] = await sql<
    {
      version_num: string;
      version: string;
      preload: string | null;
      available: string | null;
      created: string | null;
      may_create: boolean;
      database: string;
      user: string;
    }[]
  >`
    SELECT current_setting('server_version_num') AS version_num,
           current_setting('server_version') AS version,
           (SELECT setting FROM pg_settings WHERE name = 'shared_preload_libraries') AS preload,
           (SELECT default_version FROM pg_available_extensions WHERE name = 'timescaledb') AS available,
           (SELECT extversion FROM pg_extension WHERE extname = 'timescaledb') AS created,
           (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
             OR has_database_privilege(current_database(), 'CREATE') AS may_create,
           current_database() AS database,
           current_user AS user`;
  if (!row) throw new Error("the server answered no row to a constant query");
  return {
    postgresVersionNum: Number(row.version_num),
    postgresVersion: row.version,
    sharedPreloadLibraries: row.preload,
    availableVersion: row.available,
    createdVersion: row.created,
    mayCreateExtension: row.may_create,
    database: row.database,
    user: row.user,
  };
}

/**
 * Stops start-up with one clear line when the server cannot hold the schema: run
 * before the first migration (sql/000 then creates the extension when it is missing).
 */
export async function checkTimescaleServer(sql: Sql, url: string): Promise<void> {
  const problem = timescaleProblem(await serverFacts(sql), describeUrl(url));
  if (problem) throw new DatabaseStartupError(problem);
}
