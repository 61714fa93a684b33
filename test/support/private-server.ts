import { existsSync } from "node:fs";
import { appendFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { freePort } from "../../bench/free-port.ts";
import { connect } from "../../src/db/client.ts";
import { tempDir } from "./temp-dirs.ts";

/**
 * A TimescaleDB server of a test's own, started by ../shared/tsdb/start.sh, for
 * faults that would disturb every other test on the shared server (a restart, a
 * full connection table). Server runs only: with TEST_DATABASE_URL set and the
 * scripts present (TSDB_SCRIPTS points elsewhere).
 */
const tsdbScripts = process.env.TSDB_SCRIPTS ?? join(import.meta.dir, "../../../shared/tsdb");
const pgCtl = "/usr/lib/postgresql/15/bin/pg_ctl";

export const privateServerAvailable =
  Boolean(process.env.TEST_DATABASE_URL) && existsSync(join(tsdbScripts, "start.sh"));

export interface PrivateServer {
  /** A fresh database on it, `svc`, for the service under test. */
  databaseUrl: string;
  /** The `postgres` database, for the test's own administration. */
  adminUrl: string;
  /** pg_ctl restart; `immediate` is a crash as far as the service can tell. */
  restart(mode: "fast" | "immediate"): Promise<void>;
  stop(): Promise<void>;
}

/** pg_ctl as the user the server runs as (start.sh runs it as `postgres` when started by root). */
const asServerUser = (args: string[]) =>
  process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", pgCtl, ...args] : [pgCtl, ...args];

/** `maxConnections` lowers the server's connection limit (default 200), so a test can fill it. */
export async function startPrivateServer(options: { maxConnections?: number } = {}): Promise<PrivateServer> {
  const dataDir = tempDir("svc-tsdb-");
  const adminUrl = (await Bun.$`bash ${tsdbScripts}/start.sh ${dataDir} ${await freePort()}`.quiet().text()).trim();
  const restart = async (mode: "fast" | "immediate") => {
    // Not spawnSync, and not piped: the postmaster inherits pg_ctl's output, which would never close.
    const proc = Bun.spawn(asServerUser(["-D", dataDir, "-w", "restart", "-m", mode]), {
      stdout: "ignore",
      stderr: "ignore",
    });
    if ((await proc.exited) !== 0) throw new Error(`pg_ctl restart -m ${mode} failed`);
  };
  const admin = connect(adminUrl, 1);
  try {
    await admin`CREATE DATABASE svc`;
  } finally {
    await admin.end();
  }
  if (options.maxConnections !== undefined) {
    // What ALTER SYSTEM writes (it takes no bind parameters); read at the restart.
    await appendFile(join(dataDir, "postgresql.auto.conf"), `max_connections = ${options.maxConnections}\n`);
    await restart("fast");
  }
  return {
    databaseUrl: adminUrl.replace(/\/postgres$/, "/svc"),
    adminUrl,
    restart,
    async stop() {
      await Bun.$`bash ${tsdbScripts}/stop.sh ${dataDir}`.quiet().nothrow();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
