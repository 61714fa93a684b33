import { isUuid } from "../core/uuid.ts";
import type { Sql } from "../db/sql.ts";

export type OptionSpec = Record<string, { type: "string" | "boolean"; required?: boolean; description: string }>;
export type OptionValues = Record<string, string | boolean | undefined>;

/**
 * Input refused for what it names or carries (an organisation that does not
 * exist, a domain on a platform): its message alone, exit code 2.
 */
export class BadInputError extends Error {
  override name = "BadInputError";
}

/**
 * A mistake in how the command was called (an unknown command or option, an
 * argument missing or malformed): printed with the command's usage, exit code 2.
 */
export class UsageError extends BadInputError {
  override name = "UsageError";
}

/** One `bun run cli <words…>` command. `run` returns a JSON-able result; `describe` renders it for people. */
export interface Command<Result = unknown> {
  words: string[];
  summary: string;
  options: OptionSpec;
  /** Commands that manage the schema themselves skip the automatic migration. */
  migrates?: boolean;
  run(sql: Sql, options: OptionValues): Promise<Result>;
  describe(result: Result): string;
}

export function defineCommand<Result>(command: Command<Result>): Command {
  return command as Command;
}

export function requireUuid(options: OptionValues, name: string): string {
  const value = options[name];
  if (!isUuid(value)) throw new UsageError(`--${name} must be a UUID`);
  return value;
}

/**
 * A comma-separated list (`--scopes a,b`), undefined when the option is not
 * given. One that lists nothing (`--scopes ""`) is refused: most often a shell
 * variable that was never set, it would otherwise mean "none" unseen.
 */
export function listOption(options: OptionValues, name: string, instead?: string): string[] | undefined {
  const value = options[name];
  if (typeof value !== "string") return undefined;
  const items = value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 0) throw new UsageError(`--${name} lists nothing${instead ? `: ${instead}` : ""}`);
  return items;
}

export function requireString(options: OptionValues, name: string): string {
  const value = options[name];
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${name} is required`);
  return value;
}
