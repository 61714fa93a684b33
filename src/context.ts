import type { Config } from "./config.ts";
import type { SecretBox } from "./core/secret-box.ts";
import type { Database } from "./db/client.ts";
import type { ReadReplicas } from "./db/replicas.ts";
import type { Sql } from "./db/sql.ts";
import type { AdmissionGate } from "./http/admission.ts";
import type { RateLimiter } from "./http/rate-limit.ts";
import type { Logger } from "./log.ts";
import type { Mailer } from "./modules/auth/mailer.ts";
import type { DomainProbe } from "./modules/domains/probe.ts";
import type { GroupWriter } from "./modules/ingest/group-writer.ts";
import type { IngestHealth } from "./modules/ingest-health/service.ts";
import type { KeyAuthenticator } from "./modules/keys/authenticator.ts";

/** What every module needs from the running process, handed in rather than imported. */
export interface AppContext {
  config: Config;
  log: Logger;
  sql: Sql;
  /** Where owner and agent reads run: a read replica that keeps up, or the primary (`sql`). */
  readReplicas: ReadReplicas;
  /** The engine's label, the upkeep it needs from the service, and its notifications. */
  db: Pick<Database, "kind" | "maintenance" | "listen">;
  keys: KeyAuthenticator;
  rateLimiter: RateLimiter;
  /** Sheds ingest load past what the database takes in (503 with Retry-After). */
  ingestGate: AdmissionGate;
  /** Writes ingested telemetry; concurrent requests share transactions. */
  ingestWriter: GroupWriter;
  /** Counts accepted and refused ingest per organisation and hour, for the ingest health view. */
  ingestHealth: IngestHealth;
  mailer: Mailer;
  /** DNS and HTTPS as domain verification sees them (replaced in tests). */
  domainProbe: DomainProbe;
  /** The time decisions are made at, such as whether a delegation request has expired (set in tests). */
  clock: () => Date;
  /**
   * Encrypts and opens webhook signing secrets (src/modules/webhooks/secret-key.ts);
   * undefined on a database server without WEBHOOK_SECRET_KEY, where webhooks are unavailable.
   */
  webhookSecrets: SecretBox | undefined;
}
