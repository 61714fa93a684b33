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

/** ../shared/tsdb (or TSDB_SCRIPTS) is there to start servers with. */
export const tsdbScriptsAvailable = existsSync(join(tsdbScripts, "start.sh"));
export const privateServerAvailable = Boolean(process.env.TEST_DATABASE_URL) && tsdbScriptsAvailable;

export interface PrivateServer {
  /** A fresh database on it, `svc`, for the service under test. */
  databaseUrl: string;
  /** The `postgres` database, for the test's own administration. */
  adminUrl: string;
  /** pg_ctl restart; `immediate` is a crash as far as the service can tell. */
  restart(mode: "fast" | "immediate"): Promise<void>;
  /** A streaming hot standby of this server (../shared/tsdb/start-replica.sh), stopped with it. */
  startReplica(): Promise<Replica>;
  stop(): Promise<void>;
}

export interface Replica {
  databaseUrl: string;
  adminUrl: string;
  /** `immediate`: as if the machine went away. */
  stop(mode: "fast" | "immediate"): Promise<void>;
  /** Starts it again after stop(), on the same data and port. */
  start(): Promise<void>;
}

/** pg_ctl as the user the server runs as (start.sh runs it as `postgres` when started by root). */
const asServerUser = (args: string[]) =>
  process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", pgCtl, ...args] : [pgCtl, ...args];

/** pg_ctl with its output ignored: a started postmaster inherits it and would never close a pipe. */
async function pgCtlRun(args: string[]): Promise<void> {
  const proc = Bun.spawn(asServerUser(args), { stdout: "ignore", stderr: "ignore" });
  if ((await proc.exited) !== 0) throw new Error(`pg_ctl ${args.join(" ")} failed`);
}

async function startReplicaOf(primaryUrl: string, dataDir: string): Promise<Replica> {
  const primaryPort = new URL(primaryUrl).port;
  const port = String(await freePort());
  const start = async () =>
    (await Bun.$`bash ${tsdbScripts}/start-replica.sh ${primaryPort} ${dataDir} ${port}`.quiet().text()).trim();
  const adminUrl = await start();
  return {
    adminUrl,
    databaseUrl: adminUrl.replace(/\/postgres$/, "/svc"),
    stop: (mode) => pgCtlRun(["-D", dataDir, "-w", "stop", "-m", mode]),
    async start() {
      await start();
    },
  };
}

/** `maxConnections` lowers the server's connection limit (default 200), so a test can fill it. */
export async function startPrivateServer(options: { maxConnections?: number } = {}): Promise<PrivateServer> {
  const dataDir = tempDir("svc-tsdb-");
  const replicaDirs: string[] = [];
  const adminUrl = (await Bun.$`bash ${tsdbScripts}/start.sh ${dataDir} ${await freePort()}`.quiet().text()).trim();
  const restart = (mode: "fast" | "immediate") => pgCtlRun(["-D", dataDir, "-w", "restart", "-m", mode]);
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
    startReplica() {
      const replicaDir = tempDir("svc-replica-");
      replicaDirs.push(replicaDir);
      return startReplicaOf(adminUrl, replicaDir);
    },
    async stop() {
      for (const dir of [...replicaDirs, dataDir]) {
        await Bun.$`bash ${tsdbScripts}/stop.sh ${dir}`.quiet().nothrow();
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
