import { type Static, Type as T } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Cron } from "croner";

/**
 * Every setting the service reads from the environment, parsed once at start.
 * An invalid value stops start-up with a message naming the variable.
 */
const ConfigSchema = T.Object({
  PORT: T.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: T.String({ minLength: 1, default: "0.0.0.0" }),
  DATABASE_URL: T.Optional(T.String({ pattern: "^postgres(ql)?://" })),
  DATA_DIR: T.String({ minLength: 1, default: "./data" }),
  DATABASE_POOL_SIZE: T.Integer({ minimum: 1, maximum: 100, default: 10 }),
  LOG_LEVEL: T.Union([T.Literal("debug"), T.Literal("info"), T.Literal("warn"), T.Literal("error")], {
    default: "info",
  }),
  /** How long an authenticated API key is trusted from memory; the bound on revocation delay. */
  KEY_CACHE_TTL_SECONDS: T.Integer({ minimum: 0, maximum: 300, default: 30 }),
  /** Largest request body accepted, in bytes. */
  MAX_BODY_BYTES: T.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 5 * 1024 * 1024 }),
  /** Seconds to wait for in-flight requests on SIGTERM/SIGINT before closing anyway. */
  SHUTDOWN_GRACE_SECONDS: T.Integer({ minimum: 0, maximum: 300, default: 10 }),
  /** Cron pattern for compressing old events chunks when the embedded engine is in use (a server runs the policy itself). */
  EVENTS_COMPRESSION_CRON: T.String({ minLength: 1, default: "17 * * * *" }),
  /** Cron pattern for refreshing continuous aggregates when the embedded engine is in use. */
  AGGREGATE_REFRESH_CRON: T.String({ minLength: 1, default: "*/1 * * * *" }),
});

export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Parses and validates configuration from an environment map (process.env by default). */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== "") raw[key] = value;
  }
  const converted = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw));
  const first = Value.Errors(ConfigSchema, converted).First();
  if (first) {
    const variable = first.path.replace(/^\//, "") || "environment";
    throw new ConfigError(`Invalid configuration: ${variable} ${first.message} (got ${JSON.stringify(raw[variable])})`);
  }
  const config = converted as Config;
  for (const name of ["EVENTS_COMPRESSION_CRON", "AGGREGATE_REFRESH_CRON"] as const) {
    try {
      new Cron(config[name], { paused: true }).stop();
    } catch (error) {
      throw new ConfigError(`Invalid configuration: ${name} is not a cron pattern (${(error as Error).message})`);
    }
  }
  return config;
}
