import type { AuditActor } from "../core/caller.ts";
import { DomainError } from "../core/hosts.ts";
import { ProblemError } from "../core/problem.ts";
import { UnknownScopeError } from "../core/scopes.ts";
import type { Sql } from "../db/sql.ts";
import { createLogger } from "../log.ts";
import { OrganizationNotFoundError } from "../modules/keys/service.ts";
import { findOrganization, type Organization } from "../modules/organizations/service.ts";
import { BadInputError, type OptionValues, requireUuid } from "./command.ts";

/** Warnings of the CLI's own work (waiting for the database, migrations): on stderr, so that stdout is the answer. */
export const cliLog = createLogger("warn", { service: "cli" }, process.stderr);

/** Migrations also name each one as it is applied: a new database's take about half a minute in all. */
export const migrationLog = createLogger("info", { service: "cli" }, process.stderr);

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
