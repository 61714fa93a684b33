import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import type { AppContext } from "../../src/context.ts";
import type { Database } from "../../src/db/client.ts";
import { rateLimitsOff } from "../../src/http/rate-limit.ts";
import { createLogger } from "../../src/log.ts";
import { startRuntime } from "../../src/runtime.ts";
import { createServerDatabase, testServerUrl } from "./databases.ts";

interface TestRuntime {
  ctx: AppContext;
  db: Database;
  app: ReturnType<typeof createApp>;
}

let started: Promise<TestRuntime> | undefined;
let dropServerDatabase: (() => Promise<void>) | undefined;

/**
 * One database for the whole test run: the embedded engine in memory, or a fresh
 * database of its own on the TimescaleDB server at TEST_DATABASE_URL, dropped when
 * the run ends. Tests isolate themselves by creating their own organisations,
 * domains and keys (see fixtures.ts), never by order.
 */
export function testRuntime(): Promise<TestRuntime> {
  started ??= (async () => {
    let databaseUrl: string | undefined;
    if (testServerUrl) {
      const database = await createServerDatabase(testServerUrl);
      databaseUrl = database.url;
      dropServerDatabase = database.drop;
    }
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error",
      KEY_CACHE_TTL_SECONDS: "30",
      // Tests sign in by following the links the development mailer keeps.
      MAIL_OUTBOX_RAW_LINKS: "true",
      // A server needs a configured key for webhook secrets (the embedded engine would make its own).
      WEBHOOK_SECRET_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64"),
      // test/foundation/rate-limit.test.ts checks the limits on an app of its own.
      ...rateLimitsOff,
    });
    const log = createLogger(config.LOG_LEVEL, { service: "test" });
    const { ctx, db } = await startRuntime(config, log, { inMemory: true });
    return { ctx, db, app: createApp(ctx) };
  })();
  return started;
}

export async function closeTestRuntime() {
  if (!started) return;
  const { db } = await started;
  await db.close();
  await dropServerDatabase?.();
}
