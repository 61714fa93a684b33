import type { AuditActor } from "../core/caller.ts";
import type { Sql } from "../db/sql.ts";
import { createLogger } from "../log.ts";
import { findOrganization, type Organization } from "../modules/organizations/service.ts";

/** Warnings of the CLI's own work (waiting for the database, migrations): on stderr, so that stdout is the answer. */
export const cliLog = createLogger("warn", { service: "cli" }, process.stderr);

/** How the audit trail names changes made with the operator CLI. */
export const operatorCli: AuditActor = { type: "system", id: null, label: "operator CLI" };

export type OptionSpec = Record<string, { type: "string" | "boolean"; required?: boolean; description: string }>;
export type OptionValues = Record<string, string | boolean | undefined>;

/** A mistake in how the command was called: printed with usage, exit code 2. */
export class UsageError extends Error {
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

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function requireUuid(options: OptionValues, name: string): string {
  const value = options[name];
  if (typeof value !== "string" || !uuid.test(value)) throw new UsageError(`--${name} must be a UUID`);
  return value;
}

export function requireString(options: OptionValues, name: string): string {
  const value = options[name];
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${name} is required`);
  return value;
}

/** The organisation `--<name>` names; one that does not exist is a usage error (exit 2). */
export async function requireOrganization(sql: Sql, options: OptionValues, name: string): Promise<Organization> {
  const id = requireUuid(options, name);
  const org = await findOrganization(sql, id);
  if (!org) throw new UsageError(`no organisation with id ${id}`);
  return org;
}
