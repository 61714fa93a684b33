import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../config.ts";
import { decodeSecretBoxKey, SecretBox } from "../../core/secret-box.ts";
import type { DatabaseKind } from "../../db/sql.ts";
import type { Logger } from "../../log.ts";

/** The key file the embedded engine's default generates beside its data. */
export const secretKeyFileName = "webhook-secret.key";

/**
 * The key webhook signing secrets are encrypted under:
 * - WEBHOOK_SECRET_KEY when set (required on a database server: every instance
 *   must hold the same key, and a key generated on one machine is not on the next);
 * - otherwise, on the embedded engine, `DATA_DIR/webhook-secret.key`, generated on
 *   first start (mode 0600) and read on every start after: back it up with the data;
 * - an in-memory engine (tests, benchmarks) gets a key that lives as long as it does.
 * Undefined on a server without the setting: webhooks then answer 503 and the
 * sweep stays idle, rather than encrypting under a key no other instance has.
 */
export function loadWebhookSecretBox(
  config: { WEBHOOK_SECRET_KEY?: string; DATA_DIR: string },
  engine: { kind: DatabaseKind; inMemory: boolean },
  log: Logger,
): SecretBox | undefined {
  if (config.WEBHOOK_SECRET_KEY !== undefined) {
    const key = decodeSecretBoxKey(config.WEBHOOK_SECRET_KEY);
    if (!key) throw new ConfigError("Invalid configuration: WEBHOOK_SECRET_KEY is not 32 bytes in base64 or base64url");
    return new SecretBox(key);
  }
  if (engine.kind === "server") {
    log.warn("webhooks are unavailable: set WEBHOOK_SECRET_KEY (32 random bytes, base64) on every instance");
    return undefined;
  }
  if (engine.inMemory) return new SecretBox(randomBytes(SecretBox.keyBytes));
  const path = join(config.DATA_DIR, secretKeyFileName);
  try {
    // `wx`: when two processes race to create it, one writes and both read the winner's key.
    writeFileSync(path, `${randomBytes(SecretBox.keyBytes).toString("base64")}\n`, { flag: "wx", mode: 0o600 });
    log.info("generated the webhook secret key; back it up with the data directory", { path });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const key = decodeSecretBoxKey(readFileSync(path, "utf8"));
  if (!key) throw new ConfigError(`${path} does not hold a 32-byte base64 key; restore it or set WEBHOOK_SECRET_KEY`);
  return new SecretBox(key);
}
