import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Static, Type as T, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Cron } from "croner";
import { decodeSecretBoxKey } from "./core/secret-box.ts";

/** `data/` beside package.json, found from this file, not from the working directory. */
export const defaultDataDir = join(import.meta.dir, "..", "data");

/** What PUBLIC_BASE_URL and PUBLIC_INGEST_URL take (a trailing slash is dropped first). */
const originWords = "an origin: http:// or https://, a host and maybe a port, no path (https://telemetry.example.org)";

/**
 * Every setting the service reads from the environment, parsed once at start.
 * An invalid value stops start-up with a message naming the variable.
 */
const ConfigSchema = T.Object({
  PORT: T.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: T.String({ minLength: 1, default: "0.0.0.0" }),
  DATABASE_URL: T.Optional(T.String({ pattern: "^postgres(ql)?://" })),
  /**
   * The embedded engine's data directory. Unset: `data/` in the project's own
   * directory, wherever the service or the CLI is started from, so both find the
   * same database. A relative path given is taken from the working directory.
   */
  DATA_DIR: T.String({ minLength: 1, default: defaultDataDir }),
  DATABASE_POOL_SIZE: T.Integer({ minimum: 1, maximum: 100, default: 10 }),
  /** How long start-up waits for a server that is not up yet (refused, starting) before it gives up. */
  DATABASE_CONNECT_WAIT_SECONDS: T.Integer({ minimum: 0, maximum: 600, default: 30 }),
  LOG_LEVEL: T.Union([T.Literal("debug"), T.Literal("info"), T.Literal("warn"), T.Literal("error")], {
    default: "info",
  }),
  /** How long an authenticated API key is trusted from memory; the bound on revocation delay. */
  KEY_CACHE_TTL_SECONDS: T.Integer({ minimum: 0, maximum: 300, default: 30 }),
  /** Largest request body accepted, in bytes. */
  MAX_BODY_BYTES: T.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 5 * 1024 * 1024 }),
  /** Seconds a request body may take to arrive in full; a stalled upload gets 408 and frees its connection. */
  BODY_TIMEOUT_SECONDS: T.Integer({ minimum: 1, maximum: 300, default: 10 }),
  /**
   * Milliseconds a statement of a read (summary, events, urls, timeseries) may run
   * before PostgreSQL cancels it (503 query_timeout); 0 turns the limit off.
   */
  READ_STATEMENT_TIMEOUT_MS: T.Integer({ minimum: 0, maximum: 3_600_000, default: 30_000 }),
  /** Seconds to wait for in-flight requests on SIGTERM/SIGINT before closing anyway. */
  SHUTDOWN_GRACE_SECONDS: T.Integer({ minimum: 0, maximum: 300, default: 10 }),
  /** Cron pattern for the compression policies (old chunks of events and hour-level rollups) on the embedded engine (a server runs them itself). */
  EVENTS_COMPRESSION_CRON: T.String({ minLength: 1, default: "17 * * * *" }),
  /** Cron pattern for refreshing continuous aggregates when the embedded engine is in use. */
  AGGREGATE_REFRESH_CRON: T.String({ minLength: 1, default: "*/1 * * * *" }),
  /**
   * Address people reach the service at; magic links and OAuth redirect URIs are built from it.
   * Unset: the address the service listens on (listeningBaseUrl), so links work on any PORT.
   */
  PUBLIC_BASE_URL: T.Optional(T.String({ pattern: "^https?://[^/]+$", description: originWords })),
  /** Comma-separated e-mail addresses whose signed-in users are operator admins. */
  OPERATOR_ADMIN_EMAILS: T.String({ default: "" }),
  /** Lifetime of a user session. */
  SESSION_TTL_HOURS: T.Integer({ minimum: 1, maximum: 24 * 90, default: 24 * 7 }),
  /** Lifetime of a magic sign-in link. */
  MAGIC_LINK_TTL_MINUTES: T.Integer({ minimum: 1, maximum: 60, default: 15 }),
  /** Marks the session cookie Secure; turn off only for plain-HTTP local development. */
  SESSION_COOKIE_SECURE: T.Boolean({ default: true }),
  /** SMTP server for outgoing mail (smtp:// or smtps://); unset: mail is logged and kept in the mail_outbox table. */
  SMTP_URL: T.Optional(T.String({ pattern: "^smtps?://", description: "an smtp:// or smtps:// URL" })),
  /**
   * DEVELOPMENT ONLY: without SMTP_URL, keep sign-in links usable in mail_outbox (and `cli mail list`)
   * instead of redacted. Logged as a warning at start; logs redact them always.
   */
  MAIL_OUTBOX_RAW_LINKS: T.Boolean({ default: false }),
  MAIL_FROM: T.String({ minLength: 3, default: "Content Telemetry <no-reply@localhost>" }),
  /**
   * OpenID Connect providers as a JSON array of
   * {"id", "issuer", "client_id", "client_secret"?, "scopes"?}; "[]" disables OAuth sign-in.
   */
  OIDC_PROVIDERS: T.String({ default: "[]" }),
  /**
   * Requests per second each caller may send, per kind of route, with bursts of twice
   * that (src/http/rate-limit.ts); 0 turns the limit off. Ingest and reads count per
   * API key, the control plane per key or signed-in user, sign-in and /resolve per
   * client address.
   */
  RATE_LIMIT_INGEST_PER_SECOND: T.Integer({ minimum: 0, maximum: 100_000, default: 100 }),
  RATE_LIMIT_READ_PER_SECOND: T.Integer({ minimum: 0, maximum: 100_000, default: 20 }),
  /** Click-manifest lookups (GET /ctx/{token}) per second per API key: each one is a guess at a token. */
  RATE_LIMIT_CLICK_LOOKUP_PER_SECOND: T.Integer({ minimum: 0, maximum: 100_000, default: 5 }),
  RATE_LIMIT_CONTROL_PER_SECOND: T.Integer({ minimum: 0, maximum: 100_000, default: 10 }),
  RATE_LIMIT_PUBLIC_PER_SECOND: T.Integer({ minimum: 0, maximum: 100_000, default: 5 }),
  /** Failed credential lookups (401) per second per client address; past it, lookups are refused before the database. */
  RATE_LIMIT_FAILED_AUTH_PER_SECOND: T.Integer({ minimum: 0, maximum: 100_000, default: 10 }),
  /**
   * Load shedding for ingest (src/http/admission.ts): requests writing telemetry at
   * once, how many more may wait, and for how long, before 503 with Retry-After.
   * INGEST_CONCURRENCY 0 turns it off.
   */
  INGEST_CONCURRENCY: T.Integer({ minimum: 0, maximum: 1000, default: 32 }),
  INGEST_QUEUE: T.Integer({ minimum: 0, maximum: 100_000, default: 64 }),
  INGEST_QUEUE_WAIT_MS: T.Integer({ minimum: 1, maximum: 60_000, default: 2000 }),
  /**
   * The event-age window (src/core/wire-values.ts): ingest refuses event, start and
   * end timestamps older than this many days or further ahead of the server clock
   * than this many seconds (emitter clock skew).
   */
  EVENT_MAX_AGE_DAYS: T.Integer({ minimum: 1, maximum: 36_500, default: 3650 }),
  EVENT_MAX_FUTURE_SECONDS: T.Integer({ minimum: 0, maximum: 86_400, default: 300 }),
  /**
   * Ingest transactions at once (src/modules/ingest/group-writer.ts); requests
   * arriving while they run share the next one (group commit). Unset, it depends
   * on the database (ingestTransactionsFor).
   */
  INGEST_TRANSACTIONS: T.Optional(T.Integer({ minimum: 1, maximum: 100 })),
  /** Cron pattern for deleting expired sign-in links, OAuth states and ended sessions. */
  SIGN_IN_PURGE_CRON: T.String({ minLength: 1, default: "17 * * * *" }),
  /** Cron pattern for refetching participant manifests whose Cache-Control time has passed. */
  MANIFEST_REFRESH_CRON: T.String({ minLength: 1, default: "*/5 * * * *" }),
  /** Cron pattern for sweeping lapsed records (click tokens past 90 days, delegation requests past 30; src/jobs/index.ts). */
  EXPIRY_SWEEP_CRON: T.String({ minLength: 1, default: "*/10 * * * *" }),
  /**
   * The AES-256-GCM key webhook signing secrets are encrypted under, 32 bytes as
   * base64 or base64url. Unset: the embedded engine generates one into DATA_DIR
   * (webhook-secret.key); a database server needs it set (every instance the same).
   */
  WEBHOOK_SECRET_KEY: T.Optional(
    T.String({ pattern: "^[A-Za-z0-9+/_-]{43}=?$", description: "32 random bytes, base64 (openssl rand -base64 32)" }),
  ),
  /** Cron pattern (seconds field allowed) of the delivery sweep every instance runs. */
  WEBHOOK_SWEEP_CRON: T.String({ minLength: 1, default: "*/5 * * * * *" }),
  /** Cron pattern for deleting finished deliveries and dispatched events past WEBHOOK_RETENTION_DAYS. */
  WEBHOOK_PURGE_CRON: T.String({ minLength: 1, default: "37 * * * *" }),
  /** Deliveries one instance sends at once, and to one endpoint at once (one while the endpoint is failing). */
  WEBHOOK_CONCURRENCY: T.Integer({ minimum: 1, maximum: 1000, default: 32 }),
  WEBHOOK_ENDPOINT_CONCURRENCY: T.Integer({ minimum: 1, maximum: 100, default: 4 }),
  /** How long a rotated-out signing secret still signs deliveries beside the new one. */
  WEBHOOK_SECRET_OVERLAP_HOURS: T.Integer({ minimum: 0, maximum: 168, default: 24 }),
  /** An endpoint whose every attempt has failed for this long is disabled. */
  WEBHOOK_DISABLE_AFTER_DAYS: T.Integer({ minimum: 1, maximum: 90, default: 5 }),
  /** Finished deliveries (with their attempts) and dispatched outbox events are kept this long. */
  WEBHOOK_RETENTION_DAYS: T.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /** FOR TESTS ONLY: lets webhooks target loopback addresses (localhost). Logged as a warning at start. */
  WEBHOOK_ALLOW_LOOPBACK: T.Boolean({ default: false }),
  /** A PEM file of CA certificates trusted for webhook deliveries in addition to the system roots (test receivers). */
  WEBHOOK_CA_FILE: T.Optional(T.String({ minLength: 1 })),
  /**
   * What this instance serves (docs/SCALING.md), comma-separated: `ingest` (event and
   * session ingest), `api` (reads, the control plane, the API docs), `jobs` (the
   * scheduled work); or `all`, for a single container.
   */
  SERVICE_ROLES: T.String({ minLength: 1, default: "all" }),
  /**
   * The address emitters send telemetry to, when ingest has its own instances
   * (`{ingest_url}` of the interface); shown in the API docs. Unset: PUBLIC_BASE_URL.
   */
  PUBLIC_INGEST_URL: T.Optional(T.String({ pattern: "^https?://[^/]+$", description: originWords })),
  /**
   * Comma-separated URLs of streaming read replicas of DATABASE_URL: owner and agent
   * reads and exports go to one that keeps up, the rest stays on the primary.
   */
  READ_REPLICA_URLS: T.String({ default: "" }),
  /** A replica further behind the primary than this (or not answering) is skipped for the primary. */
  REPLICA_MAX_LAG_SECONDS: T.Integer({ minimum: 1, maximum: 3600, default: 5 }),
});

export const serviceRoleNames = ["ingest", "api", "jobs"] as const;
export type ServiceRole = (typeof serviceRoleNames)[number];

/** SERVICE_ROLES as a set; a ConfigError names an unknown role and the allowed ones. */
export function serviceRoles(text: string): ReadonlySet<ServiceRole> {
  const names = text
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 1 && names[0] === "all") return new Set(serviceRoleNames);
  const unknown = names.filter((name) => !(serviceRoleNames as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new ConfigError(
      `Invalid configuration: SERVICE_ROLES ${JSON.stringify(text)} names ${unknown.length > 0 ? `unknown role ${unknown.map((name) => JSON.stringify(name)).join(", ")}` : "no role"}; use all, or a comma-separated list of ${serviceRoleNames.join(", ")}`,
    );
  }
  return new Set(names as ServiceRole[]);
}

/** READ_REPLICA_URLS as a list; each must be a postgres:// URL, and replicas need a server. */
export function replicaUrls(config: Pick<Config, "READ_REPLICA_URLS" | "DATABASE_URL">): string[] {
  const urls = config.READ_REPLICA_URLS.split(",")
    .map((url) => url.trim())
    .filter(Boolean);
  const bad = urls.findIndex((url) => !/^postgres(ql)?:\/\//.test(url));
  if (bad >= 0) {
    // By position: a URL may hold a password.
    throw new ConfigError(`Invalid configuration: READ_REPLICA_URLS entry ${bad + 1} is not a postgres:// URL`);
  }
  if (urls.length > 0 && !config.DATABASE_URL) {
    throw new ConfigError(
      "Invalid configuration: READ_REPLICA_URLS needs DATABASE_URL: replicas follow a TimescaleDB server, not the embedded engine",
    );
  }
  return urls;
}

export type Config = Omit<Static<typeof ConfigSchema>, "PUBLIC_BASE_URL"> & { PUBLIC_BASE_URL: string };

/** The base URL of a service listening on host:port; a wildcard host is reached as localhost. */
export function listeningBaseUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" || host === "::" ? "localhost" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

/** One OpenID Connect provider users may sign in with. */
const OidcProviderSchema = T.Object(
  {
    id: T.String({ pattern: "^[a-z0-9][a-z0-9-]{0,39}$" }),
    /** Exactly as the provider's discovery document names it (a trailing slash included, if any). */
    issuer: T.String({ pattern: "^https?://" }),
    client_id: T.String({ minLength: 1 }),
    /** Omitted for public clients (PKCE alone). */
    client_secret: T.Optional(T.String({ minLength: 1 })),
    /** Space-separated; an ID token comes only with `openid`. */
    scopes: T.Optional(T.String({ minLength: 1 })),
  },
  // A misspelt member (client_secrett) would otherwise leave the client public, unnoticed.
  { additionalProperties: false },
);
export type OidcProviderConfig = Static<typeof OidcProviderSchema>;

/** The OIDC_PROVIDERS setting, parsed and checked (a ConfigError names what is wrong). */
export function parseOidcProviders(text: string): OidcProviderConfig[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigError("Invalid configuration: OIDC_PROVIDERS is not JSON");
  }
  const schema = T.Array(OidcProviderSchema);
  const first = Value.Errors(schema, value).First();
  if (first) throw new ConfigError(`Invalid configuration: OIDC_PROVIDERS${first.path} ${first.message}`);
  const providers = value as OidcProviderConfig[];
  for (const [i, provider] of providers.entries()) {
    if (!URL.canParse(provider.issuer)) {
      throw new ConfigError(`Invalid configuration: OIDC_PROVIDERS/${i}/issuer is not a URL`);
    }
    if (provider.scopes !== undefined && !provider.scopes.split(" ").includes("openid")) {
      throw new ConfigError(`Invalid configuration: OIDC_PROVIDERS/${i}/scopes must include openid`);
    }
  }
  if (new Set(providers.map((p) => p.id)).size !== providers.length) {
    throw new ConfigError("Invalid configuration: OIDC_PROVIDERS has duplicate ids");
  }
  return providers;
}

/**
 * The time zone of every cron pattern (the *_CRON settings): UTC, whatever the
 * process's TZ, so that instances in different zones name the same ticks.
 */
export const cronTimeZone = "Etc/UTC";

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Settings whose values may hold a password or a key: an error about one never shows its value. */
const secretSettings = new Set([
  "DATABASE_URL",
  "SMTP_URL",
  "WEBHOOK_SECRET_KEY",
  "READ_REPLICA_URLS",
  "OIDC_PROVIDERS",
]);

/**
 * The URL with only the first of its hosts: postgres.js takes `host1,host2` (the
 * servers of a failover set), which the URL parser does not.
 */
const firstHostOnly = (url: string) => url.replace(/^([a-z]+:\/\/[^/?#,]*),[^/?#]*/i, "$1");

const originSettings = new Set(["PUBLIC_BASE_URL", "PUBLIC_INGEST_URL"]);

/** Whether the parts a client decodes (postgres.js, nodemailer) decode: a stray % made them throw. */
function decodable(url: URL): boolean {
  try {
    for (const part of [url.username, url.password, url.pathname]) decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
}

/** What a setting takes, in words, for the error naming it: its values, bounds or description. */
function expectedOf(schema: TSchema | undefined): string | undefined {
  if (!schema) return undefined;
  const values = (schema.anyOf as TSchema[] | undefined)?.map((member) => member.const);
  if (values?.every((value) => typeof value === "string")) return `one of ${values.join(", ")}`;
  if (schema.type === "boolean") return "true or false (or 1 or 0)";
  if (schema.type === "integer" && schema.minimum !== undefined && schema.maximum !== undefined)
    return `a whole number from ${schema.minimum} to ${schema.maximum}`;
  return schema.description;
}

/** Settings that are URLs: beyond their pattern, each must parse as one. */
const urlSettings = ["DATABASE_URL", "SMTP_URL", "PUBLIC_BASE_URL", "PUBLIC_INGEST_URL"] as const;

const shown = (variable: string, value: unknown) =>
  secretSettings.has(variable) ? "(its value is not shown: it may hold a secret)" : `(got ${JSON.stringify(value)})`;

/** One e-mail address, loosely: something, an @, something, no spaces or brackets. */
const emailAddress = /^[^@\s<>,]+@[^@\s<>,]+$/;

/** OPERATOR_ADMIN_EMAILS holds addresses (empty entries aside); MAIL_FROM names one, alone or as `Name <address>`. */
function checkAddresses(config: Pick<Config, "OPERATOR_ADMIN_EMAILS" | "MAIL_FROM">): void {
  const admins = config.OPERATOR_ADMIN_EMAILS.split(",").map((entry) => entry.trim());
  const bad = admins.findIndex((entry) => entry !== "" && !emailAddress.test(entry));
  if (bad >= 0) {
    throw new ConfigError(
      `Invalid configuration: OPERATOR_ADMIN_EMAILS entry ${bad + 1} is not an e-mail address (got ${JSON.stringify(admins[bad])})`,
    );
  }
  // "Name <address>", or an address with a comment after it: "address (Name)".
  const from = /<([^<>]+)>\s*$/.exec(config.MAIL_FROM)?.[1] ?? config.MAIL_FROM.replace(/\([^()]*\)\s*$/, "").trim();
  if (!emailAddress.test(from)) {
    throw new ConfigError(
      `Invalid configuration: MAIL_FROM names no e-mail address: give one, or "Name <address>" (got ${JSON.stringify(config.MAIL_FROM)})`,
    );
  }
}

/** Parses and validates configuration from an environment map (process.env by default). */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(ConfigSchema.properties)) {
    const value = env[key];
    if (value === undefined || value === "") continue;
    // TypeBox's conversion would cut 2.5 to 2 and read 0x10 as 16: a whole number is written as one.
    if (schema.type === "integer" && !/^[+-]?\d+$/.test(value.trim())) {
      throw new ConfigError(`Invalid configuration: ${key} must be a whole number ${shown(key, value)}`);
    }
    // An origin written with a trailing slash, as browsers show it, is the same origin.
    raw[key] = originSettings.has(key) ? value.replace(/\/+$/, "") : value;
  }
  const converted = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw));
  const first = Value.Errors(ConfigSchema, converted).First();
  if (first) {
    const variable = first.path.replace(/^\//, "") || "environment";
    const expected = expectedOf(ConfigSchema.properties[variable as keyof Config]);
    const fault = expected ? `must be ${expected}` : first.message;
    throw new ConfigError(`Invalid configuration: ${variable} ${fault} ${shown(variable, raw[variable])}`);
  }
  const config = converted as Config;
  for (const name of urlSettings) {
    const value = config[name];
    if (value !== undefined && !URL.canParse(firstHostOnly(value))) {
      throw new ConfigError(`Invalid configuration: ${name} is not a valid URL ${shown(name, value)}`);
    }
    if (value !== undefined && !decodable(new URL(firstHostOnly(value)))) {
      throw new ConfigError(
        `Invalid configuration: ${name} has a % not followed by two hex digits in its user name, password or path: write a % there as %25 ${shown(name, value)}`,
      );
    }
  }
  checkAddresses(config);
  // PORT 0 is only known once listening: src/main.ts replaces this then.
  config.PUBLIC_BASE_URL ??= listeningBaseUrl(config.HOST, config.PORT);
  const crons = [
    "EVENTS_COMPRESSION_CRON",
    "AGGREGATE_REFRESH_CRON",
    "SIGN_IN_PURGE_CRON",
    "EXPIRY_SWEEP_CRON",
    "MANIFEST_REFRESH_CRON",
    "WEBHOOK_SWEEP_CRON",
    "WEBHOOK_PURGE_CRON",
  ] as const;
  for (const name of crons) {
    let next: Date | null;
    try {
      const cron = new Cron(config[name], { paused: true, timezone: cronTimeZone });
      next = cron.nextRun();
      cron.stop();
    } catch (error) {
      throw new ConfigError(`Invalid configuration: ${name} is not a cron pattern (${(error as Error).message})`);
    }
    // A pattern that parses may still never come round (30 February, a year gone by): its job would never run.
    if (next === null) throw new ConfigError(`Invalid configuration: ${name} never fires (${config[name]})`);
  }
  parseOidcProviders(config.OIDC_PROVIDERS);
  if (config.WEBHOOK_SECRET_KEY !== undefined && !decodeSecretBoxKey(config.WEBHOOK_SECRET_KEY)) {
    throw new ConfigError("Invalid configuration: WEBHOOK_SECRET_KEY is not 32 bytes in base64 or base64url");
  }
  if (config.WEBHOOK_CA_FILE !== undefined) readCaFile(config.WEBHOOK_CA_FILE);
  serviceRoles(config.SERVICE_ROLES);
  replicaUrls(config);
  return config;
}

/** The PEM text of WEBHOOK_CA_FILE; a ConfigError when it cannot be read or holds no certificate. */
export function readCaFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`Invalid configuration: WEBHOOK_CA_FILE cannot be read (${(error as Error).message})`);
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    throw new ConfigError("Invalid configuration: WEBHOOK_CA_FILE holds no PEM certificate");
  }
  return text;
}
