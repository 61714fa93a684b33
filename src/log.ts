import type { Config } from "./config.ts";

const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const;
export type LogLevel = keyof typeof levels;
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

/**
 * Structured JSON lines, one object per line, machine-readable by any collector:
 * on stdout for the service, on stderr for the CLI, whose stdout is its answer.
 */
export function createLogger(
  level: Config["LOG_LEVEL"],
  base: LogFields = {},
  out: { write(line: string): unknown } = process.stdout,
): Logger {
  const threshold = levels[level];
  const write = (lvl: LogLevel, msg: string, fields?: LogFields) => {
    if (levels[lvl] < threshold) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...base, ...fields });
    out.write(`${line}\n`);
  };
  return {
    debug: (msg, fields) => write("debug", msg, fields),
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    child: (fields) => createLogger(level, { ...base, ...fields }, out),
  };
}

/** Describes an unknown thrown value for a log line without leaking it to clients. */
export function describeError(error: unknown): LogFields {
  if (error instanceof Error) return { error: error.message, error_name: error.name, stack: error.stack };
  return { error: String(error) };
}
