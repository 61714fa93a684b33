import postgres from "postgres";
import { errorCode } from "./unavailable.ts";

/**
 * The database is not usable as configured: unreachable, refusing the credentials,
 * missing TimescaleDB, a failed migration. Its message is one line for the operator
 * saying what is wrong and what to do; start-up logs it without a stack trace.
 */
export class DatabaseStartupError extends Error {
  override name = "DatabaseStartupError";
}

/** The address of a connection URL without its password, safe to log. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username ? `${decodeURIComponent(parsed.username)}@` : "";
    return `${user}${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
  } catch {
    return "DATABASE_URL";
  }
}

const transientNetworkCodes = new Set(["ECONNREFUSED", "ECONNRESET", "CONNECT_TIMEOUT", "ENOTFOUND", "EAI_AGAIN"]);
// cannot_connect_now (starting up or shutting down) and too_many_connections pass on their own.
const transientServerCodes = new Set(["57P03", "53300"]);

/** A failure to connect that may pass by itself (a server still starting, a container not yet up). */
export function isTransientConnectFailure(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && (transientNetworkCodes.has(code) || transientServerCodes.has(code));
}

/**
 * One line naming why connecting to `url` failed and what the operator can do, or
 * undefined when the error is not a connection failure (then it is a bug, logged whole).
 */
export function explainConnectFailure(error: unknown, url: string): string | undefined {
  const where = describeUrl(url);
  const database = (() => {
    try {
      return decodeURIComponent(new URL(url).pathname.slice(1)) || "postgres";
    } catch {
      return "the database";
    }
  })();
  const code = errorCode(error);
  switch (code) {
    case "ECONNREFUSED":
      return `cannot reach the database at ${where}: connection refused. Is the server running and listening there? Check DATABASE_URL.`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot reach the database at ${where}: the host name does not resolve. Check DATABASE_URL.`;
    case "CONNECT_TIMEOUT":
      return `cannot reach the database at ${where}: no answer within the connect timeout. Check DATABASE_URL and the network between here and the server.`;
    case "ECONNRESET":
      return `the database at ${where} closed the connection during start-up. Check the server's log (TLS or pg_hba.conf settings).`;
  }
  if (!(error instanceof postgres.PostgresError)) return undefined;
  switch (code) {
    case "28P01":
      return `the database at ${where} refused the password for this user. Check the credentials in DATABASE_URL.`;
    case "28000":
      return `the database at ${where} refused this user: ${error.message}. Check the user in DATABASE_URL and the server's pg_hba.conf.`;
    case "3D000":
      return `the database "${database}" does not exist on ${where}. Create it (CREATE DATABASE ${database}) or fix DATABASE_URL.`;
    case "42501":
      return `the database user may not connect to or use "${database}" on ${where}: ${error.message}. Grant CONNECT and CREATE on the database to the user in DATABASE_URL.`;
    case "57P03":
      return `the database at ${where} is not accepting connections yet (starting up or shutting down). Try again once it is up.`;
    case "53300":
      return `the database at ${where} has no free connections (max_connections reached). Lower DATABASE_POOL_SIZE or raise max_connections.`;
    default:
      return undefined;
  }
}

/**
 * One line for a migration the database user may not run (insufficient_privilege),
 * or undefined for any other failure. PostgreSQL 15 stopped granting CREATE on
 * schema public to every user, so a role that may connect may still not create tables.
 */
export function explainMigrationFailure(error: unknown): string | undefined {
  if (!(error instanceof postgres.PostgresError) || error.code !== "42501") return undefined;
  return `the database user may not create the service's tables: ${error.message}. Run the service as the database's owner, or grant the user CREATE on the database and on schema public.`;
}
