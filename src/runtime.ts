import { type Config, replicaUrls } from "./config.ts";
import type { AppContext } from "./context.ts";
import { ingestLimits } from "./core/ingest-limits.ts";
import type { SecretBox } from "./core/secret-box.ts";
import { type Database, openDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { ReadCompanion } from "./db/read-companion.ts";
import { ReadReplicas } from "./db/replicas.ts";
import { AdmissionGate } from "./http/admission.ts";
import { RateLimiter } from "./http/rate-limit.ts";
import type { Logger } from "./log.ts";
import { createMailer } from "./modules/auth/mailer.ts";
import { systemDomainProbe } from "./modules/domains/probe.ts";
import { GroupWriter, ingestTransactionsFor } from "./modules/ingest/group-writer.ts";
import { flagUpdatesOn, recountSessions } from "./modules/ingest/service.ts";
import { IngestHealth } from "./modules/ingest-health/service.ts";
import { KeyAuthenticator } from "./modules/keys/authenticator.ts";
import { loadWebhookSecretBox } from "./modules/webhooks/secret-key.ts";

export function buildContext(
  config: Config,
  log: Logger,
  db: Pick<Database, "sql" | "kind" | "maintenance" | "listen" | "readCompanion">,
  webhookSecrets?: SecretBox,
): AppContext {
  return {
    config,
    log,
    sql: db.sql,
    readReplicas: new ReadReplicas(
      db.sql,
      replicaUrls(config),
      config.DATABASE_POOL_SIZE,
      config.REPLICA_MAX_LAG_SECONDS,
      log,
      db.readCompanion && new ReadCompanion(db.readCompanion, config.READ_STATEMENT_TIMEOUT_MS),
    ),
    db,
    keys: new KeyAuthenticator(db.sql, log, config.KEY_CACHE_TTL_SECONDS),
    rateLimiter: RateLimiter.fromConfig(config),
    ingestGate: new AdmissionGate(config.INGEST_CONCURRENCY, config.INGEST_QUEUE, config.INGEST_QUEUE_WAIT_MS),
    ingestWriter: new GroupWriter(
      db.sql,
      ingestTransactionsFor(db.kind, config.INGEST_TRANSACTIONS),
      2 * ingestLimits.maxEventsPerBatch,
      flagUpdatesOn(db.kind),
    ),
    ingestHealth: new IngestHealth(db.sql, log),
    mailer: createMailer(config, db.sql, log),
    domainProbe: systemDomainProbe,
    clock: () => new Date(),
    webhookSecrets,
  };
}

/**
 * Opens the database, applies migrations and builds the context every module
 * receives; the key cache then follows changes made by any process (sql/029).
 */
export async function startRuntime(
  config: Config,
  log: Logger,
  options: { inMemory?: boolean } = {},
): Promise<{ ctx: AppContext; db: Database }> {
  const db = await openDatabase(config, log, options);
  try {
    await migrate(db.sql, log);
    const recounted = await recountSessions(db.sql, flagUpdatesOn(db.kind));
    if (recounted > 0) log.info("sessions recounted from their stored events", { sessions: recounted });
    db.ready();
    const webhookSecrets = loadWebhookSecretBox(config, { kind: db.kind, inMemory: options.inMemory === true }, log);
    if (config.WEBHOOK_ALLOW_LOOPBACK) {
      log.warn(
        "WEBHOOK_ALLOW_LOOPBACK is on: webhooks may target localhost and deliveries may reach this machine. For tests only; never in production.",
      );
    }
    const ctx = buildContext(config, log, db, webhookSecrets);
    await ctx.keys.followChanges(db.listen);
    await ctx.readReplicas.start();
    return { ctx, db };
  } catch (error) {
    await db.close();
    throw error;
  }
}
