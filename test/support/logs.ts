import type { LogFields, Logger } from "../../src/log.ts";

export interface RecordedLine {
  level: string;
  msg: string;
  fields?: LogFields;
}

/** A logger that keeps its lines, for tests that check what is (and is not) logged. */
export function recordingLogger(): Logger & { lines: RecordedLine[]; text(): string } {
  const lines: RecordedLine[] = [];
  const log: Logger = {
    debug: (msg, fields) => lines.push({ level: "debug", msg, fields }),
    info: (msg, fields) => lines.push({ level: "info", msg, fields }),
    warn: (msg, fields) => lines.push({ level: "warn", msg, fields }),
    error: (msg, fields) => lines.push({ level: "error", msg, fields }),
    child: () => log,
  };
  return Object.assign(log, { lines, text: () => lines.map((line) => JSON.stringify(line)).join("\n") });
}
