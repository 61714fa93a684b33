import type { AuditActor } from "../core/caller.ts";
import { DomainError } from "../core/hosts.ts";
import { ProblemError } from "../core/problem.ts";
import { UnknownScopeError } from "../core/scopes.ts";
import { defaultMigrationsDir, migrate } from "../db/migrate.ts";
import type { Sql } from "../db/sql.ts";
import { createLogger } from "../log.ts";
import { OrganizationNotFoundError } from "../modules/keys/service.ts";
import { findOrganization, type Organization } from "../modules/organizations/service.ts";
import { BadInputError, type OptionValues, requireUuid } from "./command.ts";
import { progressLine } from "./progress.ts";

/**
 * The CLI's long work (creating a new embedded database, then its migrations: up
 * to half a minute on a busy machine) shown as the benches show theirs, on stderr.
 */
export const progress = progressLine();

/**
 * Warnings of the CLI's own work (waiting for the database, a migration retried):
 * on stderr, so that stdout is the answer, each on a line of its own, not after
 * the progress shown.
 */
export const cliLog = createLogger(
  "warn",
  { service: "cli" },
  {
    write: (line: string) => {
      progress.clear();
      process.stderr.write(line);
    },
  },
);

/** Applies the pending migrations, showing which, of how many, is being applied. */
export async function applyMigrations(sql: Sql): Promise<string[]> {
  try {
    return await migrate(sql, cliLog, defaultMigrationsDir, (name, n, total) =>
      progress.show(`applying migration ${n} of ${total}: ${name}`),
    );
  } finally {
    progress.clear();
  }
}

/** How the audit trail names changes made with the operator CLI. */
export const operatorCli: AuditActor = { type: "system", id: null, label: "operator CLI" };

/** The organisation `--<name>` names; one that does not exist is bad input (exit 2). */
export async function requireOrganization(sql: Sql, options: OptionValues, name: string): Promise<Organization> {
  const id = requireUuid(options, name);
  const org = await findOrganization(sql, id);
  if (!org) throw new BadInputError(`organisation ${id} does not exist`);
  return org;
}

/**
 * Runs the same service code as the HTTP routes, with what they refuse as bad
 * input (a domain, a scope, an organisation, a 4xx problem but a conflict) as
 * bad input (exit 2); a conflict with the stored state exits 1.
 */
export async function asBadInput<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const badInput =
      error instanceof DomainError || error instanceof UnknownScopeError || error instanceof OrganizationNotFoundError;
    if (badInput) throw new BadInputError(error.message);
    if (error instanceof ProblemError && error.status < 500 && error.status !== 409) {
      throw new BadInputError(error.detail ?? error.code);
    }
    throw error;
  }
}
