import postgres from "postgres";

/** PostgreSQL's "not now": shutting down, restarting, still starting, or no connection slot left. */
const notNowCodes = new Set(["57P01", "57P02", "57P03", "53300"]);

/** postgres.js and the runtime's names for a connection that could not be made or was lost. */
const connectionLostCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "EPIPE",
]);

/**
 * True when an error says the database is away or full for the moment (a
 * restart, a failover, a full connection table) rather than that the statement
 * is wrong: worth a 503 with Retry-After to a caller, and a warning without a
 * stack in a job's log.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof postgres.PostgresError) {
    // 55000 is a broad class; raised where a connection starts, it is a database closed to connections for now.
    return notNowCodes.has(error.code) || (error.code === "55000" && error.routine === "CheckMyDatabase");
  }
  const code = errorCode(error);
  return code !== undefined && connectionLostCodes.has(code);
}

/** The code an error carries: a SQLSTATE, or postgres.js's or the runtime's name for a connection failure. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}
