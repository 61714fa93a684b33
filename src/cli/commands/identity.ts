import { DomainError } from "../../core/hosts.ts";
import { isOrgType, orgTypes } from "../../core/organizations.ts";
import { UnknownScopeError } from "../../core/scopes.ts";
import { migrate } from "../../db/migrate.ts";
import { createLogger } from "../../log.ts";
import { registerDomain, verifyDomain } from "../../modules/domains/service.ts";
import { type ApiKeyRecord, createApiKey, listApiKeys, revokeApiKey } from "../../modules/keys/service.ts";
import { createOrganization, findOrganization } from "../../modules/organizations/service.ts";
import { defineCommand, requireString, requireUuid, UsageError } from "../command.ts";

const describeKey = (key: ApiKeyRecord) =>
  `${key.id}  ${key.prefix}…  scopes=[${key.scopes.join(",")}]  created=${key.created_at.toISOString()}  last_used=${key.last_used_at?.toISOString() ?? "never"}${key.revoked_at ? `  revoked=${key.revoked_at.toISOString()}` : ""}`;

// As over HTTP: a domain decides which events an owner sees, so only owners hold one.
const domainsAreForOwners = "only content-owner organisations hold domains";

/** Turns domain and scope mistakes into usage errors with their own message. */
async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DomainError || error instanceof UnknownScopeError) throw new UsageError(error.message);
    throw error;
  }
}

export const identityCommands = [
  defineCommand({
    words: ["migrate"],
    summary: "apply pending sql/ migrations",
    options: {},
    migrates: true,
    run: async (sql) => ({ applied: await migrate(sql, createLogger("warn")) }),
    describe: (r) => (r.applied.length ? `applied: ${r.applied.join(", ")}` : "schema is up to date"),
  }),
  defineCommand({
    words: ["org", "create"],
    summary: "create an organisation",
    options: {
      name: { type: "string", required: true, description: "display name" },
      type: { type: "string", required: true, description: orgTypes.join(" | ") },
      domain: { type: "string", description: "register this domain (unverified) on it" },
    },
    async run(sql, o) {
      const name = requireString(o, "name");
      const type = requireString(o, "type");
      if (!isOrgType(type)) throw new UsageError(`--type must be one of ${orgTypes.join(", ")}`);
      if (name.length > 200) throw new UsageError("--name must be at most 200 characters");
      if (o.domain !== undefined && type !== "content_owner") throw new UsageError(domainsAreForOwners);
      return asUsage(() =>
        sql.begin(async (tx) => {
          const org = await createOrganization(tx, { name, orgType: type });
          const domain = typeof o.domain === "string" ? await registerDomain(tx, org.id, o.domain) : null;
          return { ...org, domain: domain?.domain ?? null };
        }),
      );
    },
    describe: (r) =>
      `organisation ${r.id} (${r.org_type}) "${r.name}"${r.domain ? `, domain ${r.domain} registered` : ""}`,
  }),
  defineCommand({
    words: ["domain", "add"],
    summary: "register a domain on an organisation",
    options: {
      org: { type: "string", required: true, description: "organisation id" },
      domain: { type: "string", required: true, description: "host name" },
      verified: { type: "boolean", description: "also mark it verified (operator attestation)" },
    },
    async run(sql, o) {
      const orgId = requireUuid(o, "org");
      const input = requireString(o, "domain");
      const org = await findOrganization(sql, orgId);
      if (!org) throw new UsageError(`no organisation with id ${orgId}`);
      if (org.org_type !== "content_owner") throw new UsageError(domainsAreForOwners);
      return asUsage(() =>
        sql.begin(async (tx) => {
          const domain = await registerDomain(tx, orgId, input);
          return o.verified ? ((await verifyDomain(tx, orgId, domain.domain, "operator")) ?? domain) : domain;
        }),
      );
    },
    describe: (r) => `domain ${r.domain} on ${r.org_id}: ${r.state}`,
  }),
  defineCommand({
    words: ["domain", "verify"],
    summary: "mark a registered domain verified (operator attestation)",
    options: {
      org: { type: "string", required: true, description: "organisation id" },
      domain: { type: "string", required: true, description: "host name" },
    },
    async run(sql, o) {
      const orgId = requireUuid(o, "org");
      const input = requireString(o, "domain");
      const domain = await asUsage(() => verifyDomain(sql, orgId, input, "operator"));
      if (!domain) throw new UsageError(`${input} is not registered on organisation ${orgId}; run domain add first`);
      return domain;
    },
    describe: (r) => `domain ${r.domain} on ${r.org_id}: ${r.state}`,
  }),
  defineCommand({
    words: ["key", "create"],
    summary: "mint an API key (the raw key is printed once)",
    options: {
      org: { type: "string", required: true, description: "organisation id" },
      scopes: {
        type: "string",
        description: "comma-separated scopes (default: telemetry:read,telemetry:write,identity:read)",
      },
      "no-scopes": { type: "boolean", description: "a key with no permissions at all" },
      name: { type: "string", description: "label" },
    },
    async run(sql, o) {
      const orgId = requireUuid(o, "org");
      if (o.scopes !== undefined && o["no-scopes"]) throw new UsageError("--scopes and --no-scopes exclude each other");
      const scopes = o["no-scopes"]
        ? []
        : typeof o.scopes === "string"
          ? o.scopes
              .split(",")
              .map((s) => s.trim())
              .filter(Boolean)
          : null;
      const name = typeof o.name === "string" ? o.name : null;
      const { key, record } = await asUsage(() => createApiKey(sql, { orgId, scopes, name }));
      return { key, ...record };
    },
    describe: (r) => `${r.key}\n(shown once; store it now)\n${describeKey(r)}`,
  }),
  defineCommand({
    words: ["key", "list"],
    summary: "list an organisation's keys (never the secrets)",
    options: { org: { type: "string", required: true, description: "organisation id" } },
    run: (sql, o) => listApiKeys(sql, requireUuid(o, "org")),
    describe: (keys) => (keys.length ? keys.map(describeKey).join("\n") : "no keys"),
  }),
  defineCommand({
    words: ["key", "revoke"],
    summary: "revoke a key (every running instance drops it at once; KEY_CACHE_TTL_SECONDS is only the safety net)",
    options: { id: { type: "string", required: true, description: "key id" } },
    async run(sql, o) {
      const id = requireUuid(o, "id");
      const key = await revokeApiKey(sql, id);
      if (!key) throw new UsageError(`no key with id ${id}`);
      return key;
    },
    describe: describeKey,
  }),
];
